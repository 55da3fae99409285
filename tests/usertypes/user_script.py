"""A small application, checked with ``mypy --strict`` by ``test_user_types.py``."""

from collections.abc import AsyncIterator, Iterator
from typing import Any, assert_type

import anyio
import httpx

import streamflow
import streamflow.reactive.sinks
from streamflow.app.agent import AgentResult, http_sender
from streamflow.app.providers import AnthropicProvider
from streamflow.app.streaming import BlockStream
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sources import ReplaySource, from_bytes, from_httpx

tools = streamflow.ToolRegistry()


class CountingSink(streamflow.reactive.sinks.BaseSink):
    """A user's own sink: counts events."""

    def __init__(self) -> None:
        self.seen = 0

    def on_next(self, event: Any) -> None:
        self.seen += 1


def chunks() -> Iterator[bytes]:
    yield b"data: {}\n\n"


async def achunks() -> AsyncIterator[bytes]:
    yield b"data: {}\n\n"


def any_source(source: streamflow.SourceLike, *sinks: streamflow.SinkLike) -> streamflow.Message:
    """The public types compose in a user's own signatures."""
    return streamflow.run_sync(source, *sinks)


@tools.tool
def get_weather(city: str) -> dict[str, int]:
    """Weather of a city."""
    return {"temperature": 21}


async def main(body: bytes) -> None:
    message = await streamflow.run(from_bytes(body), streamflow.RenderSink())
    assert_type(message, streamflow.Message)
    assert_type(streamflow.run_sync(body), streamflow.Message)
    assert_type(streamflow.assemble(body), streamflow.Message)
    usage = message.usage
    assert_type(usage, streamflow.Usage | None)
    for call in message.tool_calls:
        assert_type(call.parsed_arguments, dict[str, Any])
    async with streamflow.stream(body, sinks=[streamflow.RenderSink()]) as s:
        assert_type(s, streamflow.Stream)
        async for event in s:
            assert_type(event, streamflow.UniEvent)
        async for text in s.text_stream:
            assert_type(text, str)
        async for block in s.blocks():
            assert_type(block, BlockStream)
            async for item in block:
                assert_type(item, streamflow.ContentItem)
        assert_type(await s.final_message(), streamflow.Message)
        assert_type(s.last_event_id, str | None)
    with streamflow.stream_sync(body) as ss:
        assert_type(ss, streamflow.SyncStream)
        for text in ss.text_stream:
            assert_type(text, str)
    events = from_bytes(body).pipe(pipeline("anthropic"))
    assert_type(await streamflow.run(events), streamflow.Message)
    async with streamflow.scope():
        events.subscribe(on_next=print)
    async with httpx.AsyncClient() as client:
        source = from_httpx(client, client.build_request("POST", "http://127.0.0.1/"))
        assert_type(await streamflow.run(source), streamflow.Message)
        agent = streamflow.Agent(AnthropicProvider(), tools, http_sender(client))
        result = await agent.run("hi")
        assert_type(result, AgentResult)
        assert_type(result.usage, streamflow.Usage)
        assert_type(result.cost, float | None)
    assert_type(await streamflow.run(ReplaySource("turn.sse")), streamflow.Message)
    counting = CountingSink()
    assert_type(await streamflow.run(chunks(), counting, print, streamflow.LogSink()),
                streamflow.Message)
    assert_type(await streamflow.run(achunks(), lambda event: None), streamflow.Message)
    assert_type(any_source(body, counting), streamflow.Message)
    with streamflow.stream_sync(chunks(), sinks=[counting]) as ss2:
        assert_type(ss2.final_message(), streamflow.Message)


anyio.run(main, b"")
