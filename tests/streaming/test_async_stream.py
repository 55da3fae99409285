"""``async with streamflow.stream(...)``: events, text, blocks, the message, errors, early exit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import streamflow
from streamflow import CancelledStreamError, ProviderError, SinkError, UniEvent
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sinks import AsyncSink, BaseSink
from streamflow.reactive.sources import from_bytes, from_httpx
from streamflow.servers.replay import ReplayServer, Route

DATA = Path(__file__).resolve().parent.parent / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
LONG = (DATA / "long_text.sse").read_bytes()
BROKEN = (DATA / "error_after_text.sse").read_bytes()
EXPECTED = streamflow.assemble(TURN)


def same(message: streamflow.Message | None, expected: streamflow.Message = EXPECTED) -> bool:
    """Equal but for ``created_at`` (a wall-clock stamp)."""
    assert message is not None
    return replace(message, created_at=0) == replace(expected, created_at=0)

pytestmark = pytest.mark.anyio


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


async def test_async_for_yields_every_event_and_the_message() -> None:
    sink = Keep()
    async with streamflow.stream(from_bytes(TURN, chunk_size=13), sinks=[sink]) as s:
        events = [event async for event in s]
    assert all(isinstance(e, UniEvent) for e in events)
    assert events[-1].event_type == "stop"
    assert same(s.message) and s.message.complete
    assert sink.items == events and sink.ends == ["completed"]  # fed exactly as run() feeds


async def test_text_stream_blocks_and_final_message() -> None:
    async with streamflow.stream(TURN, dialect="anthropic") as s:
        texts = [t async for t in s.text_stream]
    assert "".join(texts) == EXPECTED.text
    async with streamflow.stream(TURN) as s:
        kinds = []
        async for block in s.blocks():
            items = [item async for item in block]
            assert block.done is items[-1] and items[-1].type.endswith(".done")
            kinds.append((block.index, block.kind))
    assert kinds == [(i, item.kind) for i, item in enumerate(EXPECTED.items)]
    async with streamflow.stream(TURN) as s:
        async for block in s.blocks():  # blocks not read are skipped, the message is whole
            assert block.kind
        assert same(await s.final_message())


async def test_the_final_message_raises_the_typed_error_with_the_partial() -> None:
    async with streamflow.stream(BROKEN) as s:
        with pytest.raises(ProviderError) as caught:
            await s.final_message()
    assert caught.value.partial is not None and caught.value.partial.text == "Partial answer"


async def test_iteration_delivers_every_event_then_raises() -> None:
    seen: list[str] = []
    with pytest.raises(ProviderError):
        async with streamflow.stream(from_bytes(BROKEN, chunk_size=7)) as s:
            async for text in s.text_stream:
                seen.append(text)
    assert "".join(seen) == "Partial answer" and s.message.text == "Partial answer"


async def test_an_error_nobody_read_is_raised_when_the_block_exits() -> None:
    with pytest.raises(ProviderError):
        async with streamflow.stream(BROKEN) as s:
            with anyio.fail_after(5):
                while not s._fan.finished:
                    await anyio.sleep(0.01)


async def test_sources_of_every_accepted_kind() -> None:
    async def agen() -> AsyncIterator[bytes]:
        for i in range(0, len(TURN), 50):
            yield TURN[i:i + 50]

    for source in (TURN, [TURN[:99], TURN[99:]], agen(), from_bytes(TURN).pipe(pipeline())):
        async with streamflow.stream(source) as s:
            assert same(await s.final_message())
    async with ReplayServer(Route.from_body(TURN)) as server, httpx.AsyncClient() as client:
        async with client.stream("POST", server.url + "/v1/messages") as response:
            async with streamflow.stream(response) as s:
                assert same(await s.final_message())
        async with streamflow.stream(from_httpx(client, client.build_request(
                "POST", server.url + "/v1/messages"))) as s:
            assert same(await s.final_message())


async def test_an_http_error_status_is_typed() -> None:
    error = Route.error(529, {"type": "error", "error": {"type": "overloaded_error",
                                                          "message": "busy"}})
    async with ReplayServer(error) as server, httpx.AsyncClient() as client:
        async with client.stream("POST", server.url + "/v1/messages") as response:
            with pytest.raises(streamflow.HTTPStatusError) as caught:
                async with streamflow.stream(response) as s:
                    await s.final_message()
    assert caught.value.status == 529


@pytest.mark.parametrize("how", ["break", "raise", "cancel"])
async def test_leaving_early_closes_the_connection(how: str) -> None:
    sink = Keep()
    async with ReplayServer(Route.from_body(LONG, delays=0.005)) as server, \
            httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        with anyio.move_on_after(10) as guard:
            try:
                async with streamflow.stream(from_httpx(client, request), sinks=[sink]) as s:
                    with anyio.CancelScope() as cancel:
                        count = 0
                        async for _ in s:
                            count += 1
                            if count == 5:
                                if how == "break":
                                    break
                                if how == "raise":
                                    raise KeyError("app bug")
                                cancel.cancel()
            except KeyError:
                assert how == "raise"
        assert not guard.cancelled_caught
        hit = await server.wait_disconnect()
        assert not hit.completed
    assert isinstance(sink.ends[-1], CancelledStreamError)


async def test_a_slow_consumer_pauses_the_read() -> None:
    async with ReplayServer(Route.from_body(LONG)) as server, httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        async with streamflow.stream(from_httpx(client, request), buffer=4) as s:
            async for _ in s:
                await anyio.sleep(0.02)
                assert len(s._channel.items) <= 4 + 64  # one chunk's events past the mark
                break


async def test_a_failing_sink_gives_sink_error_after_the_events() -> None:
    class Bad(BaseSink):
        def on_next(self, event: Any) -> None:
            raise RuntimeError("render bug")

    events: list[UniEvent] = []
    with pytest.raises(SinkError) as caught:
        async with streamflow.stream(TURN, sinks=[Bad()]) as s:
            async for event in s:
                events.append(event)
    assert events[-1].event_type == "stop" and same(caught.value.partial)


async def test_async_sinks_are_fed_and_awaited() -> None:
    class Count(AsyncSink):
        def __init__(self) -> None:
            self.seen = 0
            self.end: Any = "never"

        async def on_event(self, event: Any) -> None:
            await anyio.sleep(0)
            self.seen += 1

        async def on_end(self, error: BaseException | None) -> None:
            self.end = error

    sink = Count()
    async with streamflow.stream(TURN, sinks=[sink]) as s:
        events = [e async for e in s]
    assert sink.seen == len(events) and sink.end is None


async def test_last_event_id_is_the_id_of_the_last_event_delivered() -> None:
    body = b"".join(f"id: {n}\n".encode() + part + b"\n\n"
                    for n, part in enumerate(TURN.strip().split(b"\n\n")))
    async with streamflow.stream(from_bytes(body, chunk_size=11)) as s:
        ids = []
        async for _ in s:
            ids.append(s.last_event_id)
    expected: list[str | None] = []  # one event frame at a time through the sans-IO core
    decoder = streamflow.StreamDecoder()
    for part in body.split(b"\n\n"):
        expected += [decoder.last_event_id for _ in decoder.feed(part + b"\n\n")]
    assert ids == expected and ids[0] == "2"  # frames 0 and 1 give no UniEvent
    assert s.last_event_id == str(body.count(b"id: ") - 1)


async def test_wrong_inputs_are_type_errors() -> None:
    with pytest.raises(TypeError, match="str"):
        streamflow.stream("data: {}")
    with pytest.raises(TypeError, match="from_httpx"):
        streamflow.stream(httpx.Request("POST", "http://127.0.0.1/"))
    with pytest.raises(TypeError, match="accepts"):
        streamflow.stream(42)


async def test_an_error_in_the_block_wins_over_the_stream_error() -> None:
    with pytest.raises(KeyError):
        async with streamflow.stream(BROKEN) as s:
            with anyio.fail_after(5):
                while not s._fan.finished:
                    await anyio.sleep(0.01)
            raise KeyError("the application's own error")
