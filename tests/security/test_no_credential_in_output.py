"""No credential in any text streamflow produces, proved end to end with a canary key.

Each test runs one real exchange over loopback with a canary API key -- an Agent run
(replay server, ``http_sender``), a plain run recorded, logged and traced (the
Recorder, LogSink and OtelSink, a ``?key=`` in its URL), a gateway round trip (its
own key, or the client's forwarded) and a web UI stream -- once succeeding and once
per way of failing: a non-2xx answer whose error body echoes the key (and the URL),
an in-band error event quoting the key, an upstream that cannot be reached. Then it
scans everything the run produced for the canary: the repr and str of every object
returned or raised (each exception's whole chain, args, ``__notes__``, ``to_dict``,
traceback), every event, every file written, every log record of every logger at
DEBUG (message, formatted record with its traceback, every extra field), every OTel
span (attributes, events, status) and metric point, every response body and header.

Two canaries: one shaped like a real key (``sk-...``, which redaction also knows by
its shape) and one with no known shape, so only the credential list and the values
the request carried can mask it. (Objects whose job is to hold the key are read
through their repr only: a provider's ``api_key``, the request the ``on_request``
hook is handed, and the ``httpx.Request`` an httpx error we wrap keeps as
``request``, whose message, args and traceback are scanned.) The unit tests of each
redaction are in ``test_redaction.py``.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip("starlette", reason="the web and gateway extras are not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as AppRoute

import streamflow
from streamflow import LogSink, Recorder
from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import HTTPRequest, make_provider
from streamflow.core.recording import read_recording
from streamflow.demo import DEMO_PROMPT, recording
from streamflow.demo.record import TurnRecorder
from streamflow.demo.server import event_chunks
from streamflow.demo.tools import demo_tools
from streamflow.reactive.operators import on_error, pipeline
from streamflow.reactive.sinks.otel import OtelSink
from streamflow.reactive.sinks.otel_agent import AgentTelemetry
from streamflow.reactive.sources import from_httpx
from streamflow.servers.gateway import create_app
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import ag_ui_response, ui_message_stream_response

pytestmark = pytest.mark.anyio

CANARIES = ["sk-canary-7f3a9c2e41d84b6f5a0e", "canary7f3a9c2e41d84b6f5a0eQ"]
"""A key of a known shape, and one of none (see the module doc)."""

FAILURES = ["none", "status", "in-band", "unreachable"]
"""How the upstream fails: it does not; a 401 whose body quotes the key and the URL; an
in-band error event quoting the key after the stream started; nothing listens."""

TURN1 = recording("anthropic", 1)
TURN2 = recording("anthropic", 2)


def rejected(canary: str, url: str = "") -> Route:
    """A 401 whose body quotes the key it was sent, as a careless upstream would."""
    return Route.error(401, {"type": "error", "error": {
        "type": "authentication_error",
        "message": f"invalid x-api-key {canary} (tried {url}?key={canary})"}})


def echoing(canary: str, frames: int = 1) -> Route:
    """A stream that starts (its first ``frames`` frames: ``message_start``...), then
    fails in-band quoting the key."""
    start = b"".join(f + b"\n\n" for f in TURN2.split(b"\n\n")[:frames])
    error = json.dumps({"type": "error", "error": {
        "type": "api_error", "message": f"the key {canary} is suspended"}}).encode()
    return Route(chunks=[start, b"event: error\ndata: " + error + b"\n\n"])


class Scan:
    """Everything a run produced, as text, and where it came from."""

    def __init__(self, canary: str) -> None:
        self.forms = {canary, quote(canary, safe="")}
        self.texts: list[tuple[str, str]] = []

    def text(self, where: str, text: str | bytes) -> None:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        self.texts.append((where, text))

    def obj(self, where: str, value: Any) -> None:
        """``value``'s repr and str; an exception's whole chain besides."""
        self.text(f"repr({where})", repr(value))
        self.text(f"str({where})", str(value))
        if isinstance(value, BaseException):
            self.error(where, value)

    def error(self, where: str, error: BaseException) -> None:
        self.text(f"traceback({where})", "".join(traceback.format_exception(error)))
        seen: set[int] = set()
        todo = [error]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            name = f"{where}:{type(current).__name__}"
            self.text(f"{name}.args", repr(current.args))
            self.text(f"{name}.__notes__", repr(getattr(current, "__notes__", None)))
            if isinstance(current, streamflow.StreamflowError):  # ours: every field
                self.text(f"{name}.__dict__", repr(vars(current)))
            to_dict = getattr(current, "to_dict", None)
            if callable(to_dict):
                self.text(f"{name}.to_dict()", json.dumps(to_dict(), default=repr))
            todo += [e for e in (current.__cause__, current.__context__) if e is not None]

    def files(self, folder: Path) -> None:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                self.text(f"file {path.name}", path.read_bytes())
            if path.name.endswith(".sfrec.jsonl"):  # the body chunks, base64 in the file
                body = b"".join(chunk for _, chunk in read_recording(path).chunks)
                self.text(f"body recorded in {path.name}", body)

    def records(self, records: list[logging.LogRecord]) -> None:
        formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
        for record in records:
            where = f"log {record.name}"
            self.text(where, formatter.format(record))
            for key, value in vars(record).items():
                self.text(f"{where}.{key}", repr(value))

    def telemetry(self, spans: InMemorySpanExporter, metrics: InMemoryMetricReader) -> None:
        for span in spans.get_finished_spans():
            self.text(f"span {span.name}", span.to_json())
        data = metrics.get_metrics_data()
        if data is not None:
            self.text("metrics", data.to_json())

    def response(self, where: str, response: httpx.Response) -> None:
        self.text(f"{where} body", response.content)
        self.text(f"{where} headers", repr(dict(response.headers)))

    def leaks(self) -> list[str]:
        return [f"{where}: ...{text[max(0, text.find(form) - 80):text.find(form) + 40]}..."
                for where, text in self.texts for form in self.forms if form in text]

    def check(self) -> None:
        assert self.texts, "nothing was scanned"
        leaks = self.leaks()
        assert leaks == [], "\n".join(leaks)


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def every_log_record() -> Iterator[list[logging.LogRecord]]:
    """Every record of every logger at DEBUG, while the block runs."""
    handler = Captured()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def telemetry() -> tuple[TracerProvider, InMemorySpanExporter, MeterProvider,
                         InMemoryMetricReader]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    return tracer_provider, spans, MeterProvider(metric_readers=[metrics]), metrics


async def closed_port() -> str:
    """The URL of a loopback port nothing listens on."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()
    return f"http://127.0.0.1:{port}"


def turn_routes(canary: str, failure: str) -> list[Route]:
    """The agent's two turns: the second one fails as ``failure`` says."""
    second = {"none": Route(chunks=event_chunks(TURN2)), "status": rejected(canary),
              "in-band": echoing(canary)}
    return [Route(chunks=event_chunks(TURN1)), second.get(failure, second["none"])]


# -- an Agent run ----------------------------------------------------------------------------


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("canary", CANARIES)
async def test_an_agent_run_says_no_key(canary: str, failure: str, tmp_path: Path) -> None:
    scan = Scan(canary)
    tracer_provider, spans, meter_provider, metrics = telemetry()
    requests: list[HTTPRequest] = []
    events: list[Any] = []
    raised: BaseException | None = None
    recorder = TurnRecorder(tmp_path, "anthropic")
    with every_log_record() as records:
        async with ReplayServer({"/v1/messages": turn_routes(canary, failure)}) as server, \
                httpx.AsyncClient(trust_env=False) as client:
            base = await closed_port() if failure == "unreachable" else server.url
            provider = make_provider("anthropic", base_url=base, api_key=canary,
                                     extra_headers={"authorization": f"Bearer {canary}"})

            def on_request(number: int, request: HTTPRequest) -> None:
                requests.append(request)
                recorder.begin(number, request)

            agent = Agent(provider, demo_tools(), recorder.wrap(http_sender(client)),
                          sinks=[LogSink(), recorder], on_request=on_request)
            watcher = AgentTelemetry.for_agent(agent, tracer_provider=tracer_provider,
                                               meter_provider=meter_provider)
            try:
                async with agent.stream(DEMO_PROMPT) as run:
                    async for event in watcher.watch(run):
                        events.append(event)
                result = run.result
            except Exception as error:
                raised = error
    if failure == "none":
        assert raised is None and result.text
        scan.obj("result", result)
        scan.text("to_state()", json.dumps(result.to_state()))
        for turn in result.turns:
            scan.obj("turn", turn)
        shown = repr(result)
        assert "'x-api-key': '<redacted>'" in shown and "'authorization': 'Bearer <redacted>'" \
            in shown  # the names stay: the output is still useful
    else:
        assert raised is not None
        scan.obj("the raised error", raised)
    assert requests and events
    for event in events:
        scan.obj("agent event", event)
        if event.event is not None:
            scan.text("event.to_dict()", json.dumps(event.event.to_dict(), default=repr))
    for request in requests:
        scan.text("repr(request)", repr(request))
    scan.text("repr(provider)", repr(provider))
    scan.text("repr(agent)", repr(agent))
    scan.files(tmp_path)
    scan.records(records)
    scan.telemetry(spans, metrics)
    scan.check()


# -- a run recorded, logged and traced ------------------------------------------------------


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("canary", CANARIES)
async def test_a_recorded_logged_traced_run_says_no_key(canary: str, failure: str,
                                                        tmp_path: Path) -> None:
    scan = Scan(canary)
    tracer_provider, spans, meter_provider, metrics = telemetry()
    routes = {"none": Route.from_body(TURN1), "status": rejected(canary),
              "in-band": echoing(canary)}
    path = tmp_path / "run.sfrec.jsonl"
    outcome: Any = None
    with every_log_record() as records:
        async with ReplayServer({"/v1/messages": routes.get(failure, routes["none"])}) \
                as server, httpx.AsyncClient(trust_env=False) as client:
            base = await closed_port() if failure == "unreachable" else server.url
            url = f"{base}/v1/messages?alt=sse&key={canary}"  # a key in the URL, Gemini's way
            headers = {"x-api-key": canary, "authorization": f"Bearer {canary}"}
            recorder = Recorder(path, dialect="anthropic", meta={"url": url, "headers": headers})
            log, otel = LogSink(), OtelSink(tracer_provider=tracer_provider,
                                            meter_provider=meter_provider)
            source = from_httpx(client, lambda: client.build_request(
                "POST", url, headers=headers, content=b"{}"))
            try:
                outcome = await streamflow.run(recorder.tap(source), recorder, log, otel,
                                               dialect="anthropic")
            except Exception as error:
                outcome = error
    assert isinstance(outcome, streamflow.Message) == (failure == "none")
    scan.obj("the outcome", outcome)
    scan.text("LogSink.to_dict()", json.dumps(log.to_dict(), default=repr))
    scan.files(tmp_path)
    scan.records(records)
    scan.telemetry(spans, metrics)
    scan.check()
    meta = json.loads(path.read_text().splitlines()[0])["meta"]
    assert meta["headers"] == {"x-api-key": "<redacted>", "authorization": "<redacted>"}
    assert meta["url"].endswith("/v1/messages?alt=sse&key=<redacted>")  # the rest kept


@pytest.mark.parametrize("failure", ["none", "status", "unreachable"])
async def test_a_sync_client_run_says_no_key(failure: str) -> None:
    canary = CANARIES[1]
    scan = Scan(canary)
    routes = {"none": Route.from_body(TURN1), "status": rejected(canary)}
    outcome: Any = None
    with every_log_record() as records:
        async with ReplayServer({"/v1/messages": routes.get(failure, routes["none"])}) \
                as server:
            base = await closed_port() if failure == "unreachable" else server.url

            def blocking() -> Any:
                with httpx.Client(trust_env=False) as client:
                    request = client.build_request(
                        "POST", f"{base}/v1/messages?key={canary}",
                        headers={"x-api-key": canary}, content=b"{}")
                    try:
                        return streamflow.run_sync(from_httpx(client, request), LogSink(),
                                                   dialect="anthropic")
                    except Exception as error:
                        return error

            outcome = await anyio.to_thread.run_sync(blocking)
    assert isinstance(outcome, streamflow.Message) == (failure == "none")
    scan.obj("the outcome", outcome)
    scan.records(records)
    scan.check()


@pytest.mark.parametrize("handling", ["raise", "convert", "retry"])
async def test_a_piped_run_says_no_key(handling: str, tmp_path: Path) -> None:
    """Operators between the source and the run (``pipeline()``, ``on_error``): the run
    still knows the key its source sent, and so do a recorder's tap and every sink."""
    canary = CANARIES[1]  # no known shape: only the values the request carried mask it
    scan = Scan(canary)
    tracer_provider, spans, meter_provider, metrics = telemetry()
    path = tmp_path / "run.sfrec.jsonl"
    policy: dict[str, Any] = {"retry": {"max_attempts": 2, "after_output": True,
                                         "backoff": lambda n: 0.0,
                                         "retry_on": lambda e: True}}.get(handling, {})
    outcome: Any = None
    with every_log_record() as records:
        async with ReplayServer({"/v1/messages": echoing(canary, frames=4)}) as server, \
                httpx.AsyncClient(trust_env=False) as client:  # some text, then the error
            recorder = Recorder(path, dialect="anthropic")
            source = recorder.tap(from_httpx(client, lambda: client.build_request(
                "POST", f"{server.url}/v1/messages", headers={"x-api-key": canary},
                content=b"{}")))
            piped = source.pipe(pipeline(dialect="anthropic"),
                                on_error(handling, **policy))
            sinks = [recorder, LogSink(), OtelSink(tracer_provider=tracer_provider,
                                                   meter_provider=meter_provider)]
            seen: list[Any] = []
            try:
                outcome = await streamflow.run(piped, *sinks, seen.append)
            except Exception as error:
                outcome = error
    scan.obj("the outcome", outcome)
    for item in seen:
        scan.obj("an item the sinks saw", item)
        if isinstance(item, (streamflow.StreamFailure, streamflow.StreamRestart)):
            scan.obj("its error", item.error)
    assert any(isinstance(i, (streamflow.StreamFailure, streamflow.StreamRestart))
               for i in seen) == (handling != "raise")
    scan.files(tmp_path)
    scan.records(records)
    scan.telemetry(spans, metrics)
    scan.check()


# -- a gateway round trip ---------------------------------------------------------------------


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("whose", ["the gateway's", "the client's"])
@pytest.mark.parametrize("canary", CANARIES)
async def test_a_gateway_round_trip_says_no_key(canary: str, whose: str, failure: str) -> None:
    scan = Scan(canary)
    routes: dict[str, Any] = {
        "/v1/messages": {"none": Route.from_body(TURN1), "status": rejected(canary),
                         "in-band": echoing(canary)}.get(failure, Route.from_body(TURN1)),
        "/v1/models": rejected(canary) if failure != "none" else Route.error(
            200, {"data": [{"id": "claude-test", "type": "model"}], "has_more": False})}
    ours = whose == "the gateway's"
    client_key = {} if ours else {"authorization": f"Bearer {canary}"}
    responses: list[tuple[str, httpx.Response]] = []
    with every_log_record() as records:
        async with ReplayServer(routes) as server:
            base = await closed_port() if failure == "unreachable" else server.url
            app = create_app(base, "anthropic", api_key=canary if ours else None)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
                for stream in (True, False):
                    response = await client.post("/v1/chat/completions", headers=client_key,
                                                 json={"model": "m", "stream": stream,
                                                       "messages": [{"role": "user",
                                                                     "content": "hi"}]})
                    responses.append((f"chat stream={stream}", response))
                responses.append(("models", await client.get("/v1/models", headers=client_key)))
            upstream = app.state.gateway.upstream
            await upstream.aclose()
    statuses = [r.status_code for _, r in responses]
    if failure == "none":
        assert statuses == [200, 200, 200]
    elif failure == "in-band":
        assert statuses[0] == 200 and b"error" in responses[0][1].content
    else:
        assert all(s >= 400 for s in statuses)
    for where, response in responses:
        scan.response(where, response)
    scan.text("repr(upstream)", repr(upstream))
    scan.text("repr(gateway)", repr(app.state.gateway))
    scan.records(records)
    scan.check()
    if ours:
        assert "api_key='<redacted>'" in repr(upstream)


# -- a web UI stream ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["vercel-ui", "ag-ui"])
@pytest.mark.parametrize("failure", ["status", "in-band", "unreachable"])
async def test_a_web_error_body_says_no_key(failure: str, protocol: str) -> None:
    canary = CANARIES[1]
    scan = Scan(canary)
    finished: list[Any] = []
    routes = {"status": rejected(canary), "in-band": echoing(canary)}
    with every_log_record() as records:
        async with ReplayServer({"/v1/messages": routes.get(failure, routes["status"])}) \
                as server, httpx.AsyncClient(trust_env=False) as upstream:
            base = await closed_port() if failure == "unreachable" else server.url

            async def chat(request: Request) -> Response:
                source = from_httpx(upstream, lambda: upstream.build_request(
                    "POST", f"{base}/v1/messages?key={canary}",
                    headers={"x-api-key": canary}, content=b"{}"))

                def on_finish(answer: Any, *, status: str) -> None:
                    finished.append((answer, status))

                make = ui_message_stream_response if protocol == "vercel-ui" else ag_ui_response
                return make(source, dialect="anthropic", on_finish=on_finish)

            app = Starlette(routes=[AppRoute("/chat", chat, methods=["POST"])])
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                         base_url="http://web") as client:
                response = await client.post("/chat")
    assert finished and finished[0][1] == "failed"
    scan.response("web", response)
    scan.obj("the answer", finished[0][0])
    scan.records(records)
    scan.check()
    assert b"error" in response.content.lower()
