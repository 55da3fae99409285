"""A hostile upstream (HTML 500, garbage, an endless line, a slow drip, huge headers):
the official SDKs through the gateway get a typed error, never the upstream's URL or markup."""

from __future__ import annotations

from typing import Any

import pytest
from hostile import HostileUpstream, chat_chunk, serve, sse_head

pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
anthropic = pytest.importorskip("anthropic")
from streamflow.core.limits import Limits  # noqa: E402
from streamflow.servers.gateway import create_app  # noqa: E402

pytestmark = pytest.mark.anyio
ASK = [{"role": "user", "content": "hi"}]
HTML = (b"<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>502 Bad "
        b"Gateway</h1><p>proxy at http://10.0.0.7:8080/internal failed</p>"
        + b"<p>padding</p>" * 2000 + b"</body></html>")

UPSTREAMS: dict[str, list[tuple[bytes, float]]] = {
    "html-500": [(b"HTTP/1.1 500 X\r\ncontent-type: text/html\r\ncontent-length: %d\r\n\r\n"
                  % len(HTML) + HTML, 0.0)],
    "garbage": [(sse_head() + b"\x00\xff garbage {{{ \n\n data: nope\n\n", 0.0)],
    "endless-line": [(sse_head() + b"data: " + b"x" * (4 * 1024 * 1024), 0.0)],
    "slow-drip-then-cut": [(sse_head(), 0.0)] + [(chat_chunk("x"), 0.05)] * 5,
    "huge-headers": [(b"HTTP/1.1 200 OK\r\n" + b"x-big: " + b"a" * (512 * 1024) + b"\r\n\r\n",
                      0.0)],
    # framing a desync could hide in: both lengths, a protocol switch, endless 1xx answers
    "both-framings": [(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                       b"content-length: 4\r\ntransfer-encoding: chunked\r\n\r\n"
                       + chat_chunk("x"), 0.0)],
    "switching-protocols": [(b"HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\n"
                             b"connection: upgrade\r\n\r\n" + chat_chunk("x"), 0.0)],
    "informational-flood": [(b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n" * 20_000,
                             0.0)],
}


def _limits() -> Limits:
    return Limits(max_event_bytes=1024 * 1024)


@pytest.mark.parametrize("kind", list(UPSTREAMS))
async def test_the_sdk_gets_a_typed_error_without_the_upstreams_url_or_markup(kind: str) -> None:
    with HostileUpstream(UPSTREAMS[kind]) as upstream:
        app = create_app(upstream.url + "/v1", "openai-chat", limits=_limits())
        async with serve(app) as url:
            client: Any = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)
            with pytest.raises(anthropic.APIError) as caught:
                async with client.messages.stream(model="m", max_tokens=9,
                                                  messages=ASK) as stream:
                    await stream.get_final_message()
            await client.close()
    words = str(caught.value)
    assert upstream.url.removeprefix("http://") not in words
    assert "10.0.0.7" not in words and "<" not in words.replace("<upstream>", "")
    assert len(words) < 2000
    if kind == "html-500":
        assert isinstance(caught.value, anthropic.InternalServerError)
        assert "502 Bad Gateway" in words and "alert" not in words
