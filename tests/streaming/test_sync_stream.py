"""``with streamflow.stream_sync(...)``: the same stream object for scripts without a loop."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

import streamflow
from streamflow import CancelledStreamError, ProviderError, SinkError
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sinks import AsyncSink, BaseSink
from streamflow.reactive.sources import ReplaySource, from_bytes, from_file, from_httpx

DATA = Path(__file__).resolve().parent.parent / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
BROKEN = (DATA / "error_after_text.sse").read_bytes()
EXPECTED = streamflow.assemble(TURN)


def same(message: streamflow.Message | None) -> bool:
    assert message is not None
    return replace(message, created_at=0) == replace(EXPECTED, created_at=0)


class Keep(BaseSink):
    def __init__(self) -> None:
        self.items: list[Any] = []
        self.ends: list[Any] = []

    def on_next(self, event: Any) -> None:
        self.items.append(event)

    def on_error(self, error: Exception) -> None:
        self.ends.append(error)

    def on_completed(self) -> None:
        self.ends.append("completed")


def test_for_loop_text_blocks_and_message() -> None:
    sink = Keep()
    with streamflow.stream_sync(from_bytes(TURN, chunk_size=17), sinks=[sink]) as s:
        events = list(s)
    assert same(s.message) and sink.items == events and sink.ends == ["completed"]
    with streamflow.stream_sync(TURN) as s:
        assert "".join(s.text_stream) == EXPECTED.text
    with streamflow.stream_sync(TURN) as s:
        blocks = [(b.kind, [i.type for i in b]) for b in s.blocks()]
    assert [k for k, _ in blocks] == [i.kind for i in EXPECTED.items]
    assert all(types[-1].endswith(".done") for _, types in blocks)
    with streamflow.stream_sync(TURN) as s:
        assert [b.kind for b in s.blocks()] == [i.kind for i in EXPECTED.items]  # unread: skipped
        assert same(s.final_message())


def test_every_sync_source_kind(tmp_path: Path) -> None:
    path = tmp_path / "turn.sse"
    path.write_bytes(TURN)
    with path.open("rb") as handle:
        sources: list[Any] = [TURN, [TURN[:50], TURN[50:]], handle, from_file(path),
                              ReplaySource(path, speed=None), from_bytes(TURN).pipe(pipeline())]
        for source in sources:
            with streamflow.stream_sync(source) as s:
                assert same(s.final_message()), source


def test_the_body_is_pulled_lazily_and_closed_when_left_early() -> None:
    pulled: list[int] = []
    closed = threading.Event()

    def chunks() -> Iterator[bytes]:
        try:
            for i in range(0, len(TURN), 40):
                pulled.append(i)
                yield TURN[i:i + 40]
        finally:
            closed.set()

    sink = Keep()
    with streamflow.stream_sync(chunks(), sinks=[sink]) as s:
        for _ in s:
            break
    assert len(pulled) < len(range(0, len(TURN), 40))  # not read ahead to the end
    assert isinstance(sink.ends[-1], CancelledStreamError)
    assert closed.is_set()  # the generator was finished (its finally ran)


def test_a_sync_httpx_response_is_read_and_closed() -> None:
    body = io.BytesIO(TURN)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter([body.read()]))

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        with client.stream("POST", "http://test/v1/messages") as response:
            with streamflow.stream_sync(response) as s:
                assert same(s.final_message())
            assert response.is_closed
        request = client.build_request("POST", "http://test/v1/messages")
        body.seek(0)
        with streamflow.stream_sync(from_httpx(client, request)) as s:
            assert same(s.final_message())


def test_errors_are_typed_and_never_silent() -> None:
    texts: list[str] = []
    with pytest.raises(ProviderError) as caught:
        with streamflow.stream_sync(from_bytes(BROKEN, chunk_size=9)) as s:
            for text in s.text_stream:
                texts.append(text)
    assert "".join(texts) == "Partial answer" == caught.value.partial.text  # type: ignore[union-attr]
    with pytest.raises(ProviderError):
        with streamflow.stream_sync(BROKEN) as s:
            s.final_message()
    with pytest.raises(SinkError):
        class Bad(BaseSink):
            def on_next(self, event: Any) -> None:
                raise RuntimeError("bug")

        with streamflow.stream_sync(TURN, sinks=[Bad()]) as s:
            list(s)


def test_wrong_inputs_are_type_errors() -> None:
    class Async(AsyncSink):
        async def on_event(self, event: Any) -> None:
            pass

    with pytest.raises(TypeError, match="event loop"):
        streamflow.stream_sync(TURN, sinks=[Async()])
    with pytest.raises(TypeError, match="str"):
        streamflow.stream_sync("data: {}")
    with pytest.raises(TypeError, match="from_httpx"):
        streamflow.stream_sync(httpx.Request("GET", "http://test/"))


def test_a_sync_http_error_status_is_typed_and_told_to_the_sinks() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(529, json={"type": "error", "error": {
            "type": "overloaded_error", "message": "busy"}})

    sink = Keep()
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        request = client.build_request("POST", "http://test/v1/messages")
        with pytest.raises(streamflow.HTTPStatusError) as caught:
            with streamflow.stream_sync(from_httpx(client, request), sinks=[sink]):
                raise AssertionError("the block does not run")
    assert caught.value.status == 529 and sink.ends == [caught.value]
