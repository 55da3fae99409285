"""Issue 34.5: the gateway's Anthropic ``message_start`` carries the input counts the upstream
sent at its start (an Anthropic upstream's own ``message_start``, Gemini's first
``usageMetadata``), read by the official anthropic SDK from the gateway's bytes; an
upstream that counts only at the end (OpenAI chat) still starts with zeros."""

from __future__ import annotations

import json
from typing import Any

import pytest
from recordings import MODEL, PATHS, turn_bodies

from streamflow import StreamDecoder, assemble
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects.anthropic.encode import AnthropicEncoder

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")


async def first_and_final(url: str) -> tuple[Any, Any]:
    """The ``message_start`` event and the final message, as the anthropic SDK reads them."""
    client = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)
    try:
        async with client.messages.stream(model="m", max_tokens=64, messages=[
                {"role": "user", "content": "hi"}]) as stream:
            events = [event async for event in stream]
            final = await stream.get_final_message()
    finally:
        await client.close()
    assert events[0].type == "message_start"
    return events[0], final


@pytest.mark.parametrize(("upstream", "at_start"), [
    ("anthropic", 583),  # its message_start: input_tokens 583
    ("gemini", 90),      # the first chunk's usageMetadata: promptTokenCount 90
    ("openai-chat", 0),  # OpenAI reports usage in its last chunk only
])
async def test_message_start_carries_the_upstreams_opening_counts(
        upstream: str, at_start: int, gateway: Any) -> None:
    body = turn_bodies(upstream)[0 if upstream == "anthropic" else 1]
    routes = {PATHS[upstream]: Route.from_body(body)}
    async with ReplayServer(routes) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        start, final = await first_and_final(url)
    assert start.message.usage.input_tokens == at_start
    whole = assemble(body, upstream).usage_metadata
    assert whole is not None  # the totals at the end are the upstream's, as before
    assert final.usage.output_tokens == whole.response_tokens
    assert final.usage.input_tokens + (final.usage.cache_read_input_tokens or 0) + (
        final.usage.cache_creation_input_tokens or 0) == whole.prompt_tokens


def test_an_anthropic_round_trip_keeps_message_start_as_it_came() -> None:
    """Same dialect: the re-encoded ``message_start`` usage is the upstream's, byte for byte."""
    body = turn_bodies("anthropic")[0]
    decoder = StreamDecoder("anthropic")
    events = decoder.feed(body) + decoder.close()
    encoder = AnthropicEncoder()
    out = b"".join(encoder.feed(e) for e in events)

    def start_usage(raw: bytes) -> Any:
        head = raw.split(b"\n\n")[0].split(b"data: ", 1)[1]
        return json.loads(head)["message"]["usage"]
    assert start_usage(out) == start_usage(body)
    assert start_usage(body)["input_tokens"] == 583
