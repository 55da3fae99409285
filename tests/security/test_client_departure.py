"""A client leaving in any phase releases the upstream within 1 s (real uvicorn, loopback).

The hostile upstream records when the gateway closed its connection; the client
(httpx) leaves before the upstream's headers, while the upstream's error body
drips, during a non-streaming answer and mid-stream.
"""

from __future__ import annotations

import time
from functools import partial

import anyio
import httpx
import pytest
from hostile import HOLD, HostileUpstream, chat_chunk, drip, serve, sse_head

pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
from streamflow.servers.gateway import create_app

pytestmark = pytest.mark.anyio

ASK = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
HTML_500 = (b"HTTP/1.1 500 X\r\ncontent-type: text/html\r\ncontent-length: 100000\r\n\r\n"
            b"<html>")

PHASES = {
    "before-headers-streaming": (HOLD, True, False),
    "before-headers-non-streaming": (HOLD, False, False),
    "error-body-dripping": (drip(HTML_500, b"<p>slow</p>"), True, False),
    "non-streaming-answer": (drip(sse_head(), chat_chunk("x")), False, False),
    "mid-stream": (drip(sse_head(), chat_chunk("x")), True, True),
}


@pytest.mark.parametrize("phase", list(PHASES))
async def test_the_upstream_is_released_when_the_client_leaves(phase: str) -> None:
    script, stream, read_first = PHASES[phase]
    with HostileUpstream(script) as upstream:
        app = create_app(upstream.url + "/v1", "openai-chat")
        async with serve(app) as url, httpx.AsyncClient(timeout=30) as client:
            got_first = anyio.Event()

            async def ask() -> None:
                async with client.stream("POST", url + "/v1/messages",
                                         json={**ASK, "stream": stream}) as response:
                    async for _ in response.aiter_raw():
                        got_first.set()

            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                await upstream.wait_arrived()
                if read_first:
                    with anyio.fail_after(10):
                        await got_first.wait()
                await anyio.sleep(0.3)  # the gateway is in the phase now
                assert not upstream.closed, "the upstream closed before the client left"
                group.cancel_scope.cancel()
            left = time.monotonic()
            closed = await upstream.wait_closed(within=5)
    assert closed - left < 1.0, f"upstream released {closed - left:.2f} s after the client left"


async def test_many_clients_leaving_before_headers_leave_no_upstream_open() -> None:
    with HostileUpstream(HOLD) as upstream:
        app = create_app(upstream.url + "/v1", "openai-chat")
        async with serve(app) as url, httpx.AsyncClient(timeout=30) as client:
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(partial(client.post, url + "/v1/messages", json=ASK))
                await upstream.wait_arrived(20)
                group.cancel_scope.cancel()
            await upstream.wait_closed(20, within=5)
