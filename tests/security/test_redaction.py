"""Each redaction on its own: the one credential list, the reprs of every object holding a
request or a key, errors, log records, and the output kept useful (names kept, values
masked). The end-to-end scans are ``test_no_credential_in_output.py``."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import logging
import sys
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote

import httpx
import pytest

from streamflow import LogSink
from streamflow.app.agent import Agent, AgentEvent, AgentResult, Turn
from streamflow.app.providers import AnthropicProvider, HTTPRequest, make_provider
from streamflow.app.runtime import run
from streamflow.app.tools import ToolRegistry
from streamflow.core.errors import (
    HTTPStatusError,
    ProtocolError,
    ProviderError,
    SinkError,
    TransportError,
)
from streamflow.core.message import Message
from streamflow.core.recording import read_recording
from streamflow.demo.plan import Plan
from streamflow.demo.record import TurnRecorder
from streamflow.reactive.sinks.recorder import Recorder
from streamflow.reactive.sources import from_bytes
from streamflow.reactive.sources._http_errors import status_error, transport_error
from streamflow.wire.dialects import REQUESTS, credential_headers, credential_params, get_encoder
from streamflow.wire.redaction import (
    REDACTED,
    ChunkMasker,
    RedactingFilter,
    redact_headers,
    redact_text,
    redact_url,
    redact_value,
    scrub_error,
    secrets_in,
    with_secrets,
)

KEY = "canary7f3a9c2e41d84b6f5a0eQ"
"""A key of no known shape: only the credential list and the known values mask it."""


def test_the_one_list_holds_every_request_sides_header_and_parameter() -> None:
    assert {"authorization", "proxy-authorization", "api-key", "x-api-key",
            "x-goog-api-key"} <= credential_headers()
    assert {"key", "api_key", "access_token"} <= credential_params()  # key: Gemini's


SIDE = '''
from streamflow.wire.dialects.openai_chat import request as chat
from streamflow.wire.dialects.request_base import RequestSide

REQUEST = RequestSide(
    name="throwaway", build=chat.build, path="/chat", credential="x-throwaway-key",
    bearer=False, credential_param="tk", error_body=chat.error_body, codec="openai-chat")
'''


def test_a_new_request_sides_header_and_parameter_are_masked_everywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sf_redaction_side.py").write_text(SIDE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(REQUESTS, "throwaway", "sf_redaction_side:REQUEST")
    monkeypatch.delitem(sys.modules, "sf_redaction_side", raising=False)
    assert "x-throwaway-key" in credential_headers() and "tk" in credential_params()
    assert redact_headers({"X-Throwaway-Key": KEY}) == {"X-Throwaway-Key": REDACTED}
    assert redact_url(f"https://h/chat?tk={KEY}&a=1") == f"https://h/chat?tk={REDACTED}&a=1"
    assert redact_text(f"sent x-throwaway-key: {KEY}") == f"sent x-throwaway-key: {REDACTED}"
    assert secrets_in({"x-throwaway-key": KEY}, f"https://h/?tk={KEY}2") == {KEY, KEY + "2"}


def test_headers_keep_their_names_and_a_scheme() -> None:
    headers = {"X-Api-Key": KEY, "Authorization": f"Bearer {KEY}", "api-key": KEY,
               "Proxy-Authorization": f"Basic {KEY}", "accept": "text/event-stream"}
    assert redact_headers(headers) == {
        "X-Api-Key": "<redacted>", "Authorization": "Bearer <redacted>", "api-key": "<redacted>",
        "Proxy-Authorization": "Basic <redacted>", "accept": "text/event-stream"}
    assert redact_headers([("x-goog-api-key", KEY)]) == {"x-goog-api-key": "<redacted>"}
    assert redact_headers({"x-note": f"the key {KEY}"}, [KEY]) == {"x-note": "the key <redacted>"}


@pytest.mark.parametrize(("url", "shown"), [
    (f"https://g.test/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}",
     "https://g.test/v1beta/models/m:streamGenerateContent?alt=sse&key=<redacted>"),
    (f"https://h.test/x?api_key={KEY}&b=2#f", "https://h.test/x?api_key=<redacted>&b=2#f"),
    (f"https://h.test/x?KEY={KEY}", "https://h.test/x?KEY=<redacted>"),
    (f"redis://:{KEY}@localhost:6379/0", "redis://:<redacted>@localhost:6379/0"),
    (f"https://user:{KEY}@h.test/v1", "https://user:<redacted>@h.test/v1"),
    ("http://127.0.0.1:8080/v1?alt=sse&monkey=1", "http://127.0.0.1:8080/v1?alt=sse&monkey=1"),
])
def test_a_url_keeps_all_but_its_credentials(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize(("text", "shown"), [
    (f"x-api-key: {KEY}", "x-api-key: <redacted>"),
    (f"{{'x-api-key': '{KEY}', 'accept': 'a'}}", "{'x-api-key': '<redacted>', 'accept': 'a'}"),
    (f'{{"authorization":"Bearer {KEY}"}}', '{"authorization":"Bearer <redacted>"}'),
    (f"sent with Bearer {KEY} today", "sent with Bearer <redacted> today"),
    ("use Bearer authentication (Authorization header)",
     "use Bearer authentication (Authorization header)"),  # prose stays
    ("Incorrect API key provided: sk-proj-abcdefghijklmnop1234",
     "Incorrect API key provided: <redacted>"),  # the shape of a real key
    ("AIzaSyA1234567890abcdefghijklmnopqrstu was refused", "<redacted> was refused"),
    ("the task-force met at risk-assessment-level-three", "the task-force met at "
     "risk-assessment-level-three"),
])
def test_text_is_masked_where_it_names_a_credential(text: str, shown: str) -> None:
    assert redact_text(text) == shown


def test_known_values_are_masked_wherever_they_are_but_not_short_ones() -> None:
    assert redact_text(f"you sent {KEY}!", [KEY]) == "you sent <redacted>!"
    quoted = "pa ss/wo+rd:12345"
    assert redact_text("?x=pa%20ss%2Fwo%2Brd%3A12345", [quoted]) == "?x=<redacted>"
    assert redact_text("keep every k", ["k"]) == "keep every k"  # api_key="k" in a test


def test_values_are_masked_through_json_like_data() -> None:
    value = {"headers": {"X-Api-Key": KEY, "accept": "a"}, "list": [f"a {KEY}", 3, None],
             "api_key": KEY, "raw": KEY.encode(), "nested": ({"key": KEY},)}
    assert redact_value(value, [KEY]) == {
        "headers": {"X-Api-Key": REDACTED, "accept": "a"}, "list": ["a <redacted>", 3, None],
        "api_key": REDACTED, "raw": b"<redacted>", "nested": ({"key": REDACTED},)}


def test_the_values_a_request_carries() -> None:
    basic = base64.b64encode(f"me:{KEY}".encode()).decode()
    assert secrets_in({"Authorization": f"Bearer {KEY}"}) == {f"Bearer {KEY}", KEY}
    assert KEY in secrets_in({"proxy-authorization": f"Basic {basic}"})
    assert secrets_in({"accept": KEY, "x-api-key": "k"}) == frozenset()  # no key / too short
    assert secrets_in(None, f"https://u:{KEY}@h/x?alt=sse&key={KEY}2") == {KEY, KEY + "2"}
    assert secrets_in(None, httpx.URL(f"https://h/x?key={KEY}")) == {KEY}


# -- errors ------------------------------------------------------------------------------------


def test_a_status_error_is_scrubbed_whole_in_place() -> None:
    url = f"POST https://g.test/v1/x?key={KEY}"
    error = status_error(401, {"x-api-key": KEY, "request-id": "r1"},
                         f'{{"error": {{"message": "bad key {KEY}"}}}}'.encode(), where=url)
    error.add_note(f"sent {KEY}")
    assert KEY in str(error)  # before: the envelope and the URL both quote it
    assert scrub_error(error, [KEY]) is error
    for text in (str(error), repr(error), error.message, repr(error.args), repr(error.body),
                 repr(error.headers), repr(error.__notes__), repr(error.to_dict())):
        assert KEY not in text
    assert error.message == ("HTTP 401 from POST https://g.test/v1/x?key=<redacted>: "
                             "bad key <redacted>")
    assert error.headers == {"x-api-key": REDACTED, "request-id": "r1"}
    assert error.status == 401 and error.request_id == "r1"  # the rest kept


def test_the_httpx_error_a_transport_error_wraps_is_scrubbed_too() -> None:
    request = httpx.Request("POST", f"https://h.test/v1?key={KEY}")
    cause = httpx.ConnectError(f"cannot reach {request.url}", request=request)
    error = transport_error(cause, f"POST {request.url}")
    assert isinstance(error, TransportError) and error.__cause__ is cause
    scrub_error(error)  # no known value: the URL's parameter alone names it
    assert KEY not in str(error) and KEY not in str(cause)
    assert str(cause) == "cannot reach https://h.test/v1?key=<redacted>"


def test_a_sink_errors_and_a_protocol_errors_raw_text_are_scrubbed() -> None:
    inner = ValueError(f"sink saw x-api-key: {KEY}")
    error = SinkError([(object(), inner)])
    raw = ProtocolError("bad frame", raw=f'{{"api_key": "{KEY}"}}'.encode())
    scrub_error(error)
    scrub_error(raw, [KEY])
    assert KEY not in str(error) and KEY not in str(inner)
    assert raw.raw == b'{"api_key": "<redacted>"}'


def test_an_encoders_in_band_error_has_no_key() -> None:
    error = HTTPStatusError(f"HTTP 401: bad key, url ?key={KEY}", status=401)
    written = get_encoder("openai-chat")().fail(error)
    assert KEY.encode() not in written and b"?key=<redacted>" in written


@pytest.mark.anyio
async def test_an_agent_turns_error_is_scrubbed_whatever_send_is() -> None:
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            b'"model":"c","role":"assistant","content":[],"usage":{"input_tokens":1}}}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"api_error","message":'
            b'"the key ' + KEY.encode() + b' is suspended"}}\n\n')
    agent = Agent(make_provider("anthropic", api_key=KEY), ToolRegistry(),
                  lambda request: from_bytes(body))  # a source that knows no key
    with pytest.raises(ProviderError) as raised:
        await agent.run("hi")
    assert KEY not in str(raised.value) and "the key <redacted> is suspended" in str(raised.value)


@pytest.mark.anyio
async def test_what_an_agents_sinks_see_holds_no_key_whatever_send_is(tmp_path: Path) -> None:
    """The Agent knows the key its request carries: the run's sinks are told it too."""
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            b'"model":"c","role":"assistant","content":[],"usage":{"input_tokens":1}}}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"api_error","message":'
            b'"the key ' + KEY.encode() + b' is suspended"}}\n\n')
    seen: list[BaseException] = []
    log, turns = LogSink(), TurnRecorder(tmp_path, "anthropic")
    agent = Agent(make_provider("anthropic", api_key=KEY), ToolRegistry(),
                  turns.wrap(lambda request: from_bytes(body)),  # a source that knows no key
                  sinks=[log, turns, seen.append],
                  on_request=turns.begin)
    with pytest.raises(ProviderError):
        await agent.run("hi")
    recorded = (tmp_path / "turn1.sfrec.jsonl").read_text()
    for text in (json.dumps(log.to_dict()), recorded,
                 base64.b64decode(json.loads(recorded.splitlines()[1])["chunk"]).decode()):
        assert KEY not in text and "<redacted>" in text


# -- reprs -------------------------------------------------------------------------------------


def request() -> HTTPRequest:
    return HTTPRequest(f"https://g.test/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}",
                       {"x-goog-api-key": KEY, "authorization": f"Bearer {KEY}",
                        "content-type": "application/json"}, {"contents": []})


def test_a_requests_repr_keeps_everything_but_the_key() -> None:
    shown = repr(request())
    assert KEY not in shown and KEY not in str(request())
    assert shown == (
        "HTTPRequest(url='https://g.test/v1beta/models/m:streamGenerateContent?alt=sse&key="
        "<redacted>', headers={'x-goog-api-key': '<redacted>', 'authorization': 'Bearer "
        "<redacted>', 'content-type': 'application/json'}, json={'contents': []}, "
        "method='POST')")
    assert request().headers["x-goog-api-key"] == KEY  # what is sent is untouched


def test_turns_results_and_agent_events_hold_the_request_without_showing_the_key() -> None:
    turn = Turn(request(), Message())
    result = AgentResult([turn], [{"role": "user", "content": "hi"}])
    for value in (turn, result, AgentEvent("run.end", 1, result=result)):
        assert KEY not in repr(value) and KEY not in str(value)
        assert "'x-goog-api-key': '<redacted>'" in repr(value)


@pytest.mark.parametrize("name", ["anthropic", "openai-chat"])
def test_a_providers_repr_says_a_key_is_set_not_which(name: str) -> None:
    provider = make_provider(name, api_key=KEY, base_url=f"https://h.test/v1?api_key={KEY}",
                             extra_headers={"Authorization": f"Bearer {KEY}", "x-t": "1"})
    shown = repr(provider)
    assert KEY not in shown and KEY not in str(provider)
    assert "api_key='<redacted>'" in shown and "api_key=<redacted>" in shown
    assert "'Authorization': 'Bearer <redacted>'" in shown and "'x-t': '1'" in shown
    assert provider.api_key == KEY
    assert "api_key=''" in repr(make_provider(name, api_key=""))  # none set: it says so


def test_a_provider_subclass_of_its_own_leaves_the_key_out() -> None:
    @dataclasses.dataclass(slots=True)
    class Mine(AnthropicProvider):  # a generated repr, not the base's
        name: ClassVar[str] = "mine"
        region: str = "eu"

    shown = repr(Mine(api_key=KEY))
    assert KEY not in shown and "region='eu'" in shown


def test_the_gateways_upstream_and_the_demos_plan_show_no_key() -> None:
    pytest.importorskip("starlette")
    from streamflow.servers.gateway import Upstream

    upstream = Upstream(f"https://h.test?key={KEY}", "anthropic", api_key=KEY,
                        headers={"x-api-key": KEY, "x-extra": "1"})
    shown = repr(upstream)
    assert KEY not in shown
    assert shown == ("Upstream(url='https://h.test?key=<redacted>', dialect='anthropic', "
                     "api_key='<redacted>', model=None, headers={'x-api-key': '<redacted>', "
                     "'x-extra': '1'})")
    assert KEY not in repr(Plan("live", "anthropic", "https://h.test", KEY))


def test_a_started_answers_resume_token_is_not_shown() -> None:
    pytest.importorskip("starlette")
    from streamflow.servers.web._resume_access import Started

    assert repr(Started("c1", "sf:c1:1", KEY)) == (
        "Started(chat_id='c1', key='sf:c1:1', token='<redacted>')")
    assert repr(Started("c1", "sf:c1:1", None)).endswith("token=None)")
    assert redact_url(f"/chat/c1/stream?resume_token={KEY}") == (
        "/chat/c1/stream?resume_token=<redacted>")


# -- log records -------------------------------------------------------------------------------


def record(msg: str, *args: object, **extra: object) -> logging.LogRecord:
    out = logging.LogRecord("streamflow.servers.gateway", logging.WARNING, __file__, 1, msg, args,
                            None)
    out.__dict__.update(extra)
    return out


def test_a_log_record_is_masked_message_extra_and_exception() -> None:
    try:
        raise TransportError(f"failed: POST https://h.test/v1?key={KEY}")
    except TransportError:
        exc_info = sys.exc_info()
    line = record("upstream failed: %s (%s)", f"https://h.test/x?key={KEY}", 3,
                  headers={"x-api-key": KEY}, note=f"Bearer {KEY}")
    line.exc_info = exc_info
    assert RedactingFilter().filter(line) is True  # masks, never drops
    text = logging.Formatter("%(message)s %(headers)s %(note)s").format(line)
    assert KEY not in text
    assert text.startswith("upstream failed: https://h.test/x?key=<redacted> (3) "
                           "{'x-api-key': '<redacted>'} Bearer <redacted>")
    plain = record("dropped %r", "temperature")
    RedactingFilter().filter(plain)
    assert plain.args == ("temperature",)  # nothing to mask: the record is left as it was


def test_the_gateway_commands_log_handlers_mask_every_line() -> None:
    pytest.importorskip("uvicorn")
    from streamflow.cli.gateway import _log_config

    config = _log_config("info")
    assert config["filters"]["redact"]["()"] == "streamflow.wire.redaction.RedactingFilter"
    assert all("redact" in handler["filters"] for handler in config["handlers"].values())
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    handler.handle(record('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET",
                          f"/v1/models?key={KEY}", "1.1", 200))
    assert stream.getvalue() == '127.0.0.1:5 - "GET /v1/models?key=<redacted> HTTP/1.1" 200\n'


def test_an_access_line_keeps_its_arguments_for_uvicorns_formatter() -> None:
    """uvicorn's access formatter unpacks ``record.args``: masking must keep them."""
    pytest.importorskip("uvicorn")
    from uvicorn.logging import AccessFormatter

    line = record('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "POST",
                  f"/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}", "1.1", 200)
    RedactingFilter().filter(line)
    assert line.args == ("127.0.0.1:5", "POST",
                         "/v1beta/models/m:streamGenerateContent?alt=sse&key=<redacted>",
                         "1.1", 200)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(AccessFormatter("%(client_addr)s %(request_line)s %(status_code)s",
                                         use_colors=False))
    handler.addFilter(RedactingFilter())  # as the gateway command's handlers have it
    handler.handle(record('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET",
                          f"/v1/models?key={KEY}", "1.1", 200))
    assert stream.getvalue() == "127.0.0.1:5 GET /v1/models?key=<redacted> HTTP/1.1 200 OK\n"


def test_a_record_that_cannot_format_is_reported_without_the_key(
        capsys: pytest.CaptureFixture[str]) -> None:
    broken = record(f"GET /v1?key={KEY} %s %s", "one argument short")
    handler = logging.StreamHandler(io.StringIO())
    handler.addFilter(RedactingFilter())
    handler.handle(broken)  # logging reports the failure on stderr, with msg and args
    reported = capsys.readouterr().err
    assert "Logging error" in reported and "key=<redacted>" in reported
    assert KEY not in reported


# -- recordings: a key the provider quotes in the body ----------------------------------------


def masked(secrets: list[str], chunks: list[bytes]) -> list[tuple[int, bytes]]:
    masker = ChunkMasker(secrets)
    out = [piece for n, chunk in enumerate(chunks) for piece in masker.feed(n, chunk)]
    return out + masker.flush()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 26, 1000])
def test_a_key_split_by_any_chunking_is_masked_and_the_chunks_keep_their_times(
        size: int) -> None:
    body = f'data: {{"message":"the key {KEY} is suspended, {KEY}!"}}\n\n'.encode()
    chunks = [body[i:i + size] for i in range(0, len(body), size)]
    out = masked([KEY], chunks)
    assert b"".join(c for _, c in out) == body.replace(KEY.encode(), b"<redacted>")
    assert [n for n, _ in out] == list(range(len(chunks)))  # one line per chunk, in order


def test_the_masker_holds_only_what_could_begin_a_key() -> None:
    masker = ChunkMasker([KEY])
    assert masker.feed(0, b"data: x\n\n") == [(0, b"data: x\n\n")]  # nothing held
    assert masker.feed(1, b"the key canary7f") == []  # it may go on as the key
    assert masker.feed(2, b"ish, not the key") == [(1, b"the key canary7f"),
                                                   (2, b"ish, not the key")]
    assert masker.flush() == []
    nothing = ChunkMasker([])  # no value known: every chunk goes at once
    assert nothing.feed(0, b"canary7f") == [(0, b"canary7f")]
    short = ChunkMasker(["k"])  # too short to be searched for (MIN_SECRET)
    assert short.feed(0, b"k") == [(0, b"k")]


def test_two_keys_and_the_url_encoded_form_are_masked() -> None:
    other = "second/secret+value=="
    body = f"{KEY} {quote(other, safe='')} {other}".encode()
    out = masked([KEY, other], [body[i:i + 4] for i in range(0, len(body), 4)])
    assert b"".join(c for _, c in out) == b"<redacted> <redacted> <redacted>"


@pytest.mark.anyio
async def test_a_recording_masks_the_key_its_source_sent_chunks_and_events(
        tmp_path: Path) -> None:
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            b'"model":"c","role":"assistant","content":[],"usage":{"input_tokens":1}}}\n\n'
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":""}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"your key is ' + KEY.encode() + b'"}}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"api_error","message":'
            b'"the key ' + KEY.encode() + b' is suspended"}}\n\n')
    source = from_bytes(body, chunk_size=5)
    source.secrets = frozenset({KEY})  # type: ignore[attr-defined]  # as an HTTP source says
    path = tmp_path / "r.sfrec.jsonl"
    recorder = Recorder(path, dialect="anthropic")
    with pytest.raises(ProviderError):
        await run(recorder.tap(source), recorder, dialect="anthropic")
    text = path.read_text()
    recorded = read_recording(path)
    played = b"".join(chunk for _, chunk in recorded.chunks)
    assert KEY not in text and KEY.encode() not in played
    assert played == body.replace(KEY.encode(), b"<redacted>")  # the rest as it arrived
    assert len(recorded.chunks) == -(-len(body) // 5)
    assert "your key is <redacted>" in text  # the event line too


@pytest.mark.anyio
async def test_a_run_inside_with_secrets_masks_that_key_everywhere(tmp_path: Path) -> None:
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            b'"model":"c","role":"assistant","content":[],"usage":{"input_tokens":1}}}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"api_error","message":'
            b'"the key ' + KEY.encode() + b' is suspended"}}\n\n')
    path, log = tmp_path / "r.sfrec.jsonl", LogSink()
    with with_secrets([KEY]):
        recorder = Recorder(path, dialect="anthropic")
        with pytest.raises(ProviderError) as raised:
            await run(recorder.tap(from_bytes(body, chunk_size=7)), recorder, log,
                      dialect="anthropic")
    played = b"".join(c for _, c in read_recording(path).chunks).decode()
    for text in (str(raised.value), json.dumps(log.to_dict()), path.read_text(), played):
        assert KEY not in text and "the key <redacted> is suspended" in text
    with pytest.raises(ProviderError) as outside:  # the block is over: known by shape only
        await run(from_bytes(body), dialect="anthropic")
    assert KEY in str(outside.value)
