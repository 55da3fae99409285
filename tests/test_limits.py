"""Limits against memory exhaustion: each raises LimitExceededError naming it, keeping the past.

Through ``assemble()`` (sans-IO) and through ``run()`` (the reactive pipeline, on
asyncio and trio), for SSE, NDJSON and AWS event-stream bodies; and a 1 GB body of
one unterminated line, produced lazily, fails at the limit with bounded memory.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

import streamflow
from streamflow import LimitExceededError, Limits, Message, assemble
from streamflow.core.limits import DEFAULT_LIMITS, MiB
from streamflow.reactive.sources import from_iterable
from streamflow.wire.framing.eventstream import encode_message


def sse(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(obj)}\n\n".encode()


def start() -> bytes:
    return sse({"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}})


def block(index: int, kind: str = "text", **extra: Any) -> bytes:
    content = {"type": kind, kind: ""} if kind != "tool_use" else \
        {"type": "tool_use", "id": f"t{index}", "name": "f", "input": {}}
    return sse({"type": "content_block_start", "index": index, "content_block": content | extra})


def delta(index: int, text: str) -> bytes:
    return sse({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": text}})


def args(index: int, part: str) -> bytes:
    return sse({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part}})


def stop(index: int) -> bytes:
    return sse({"type": "content_block_stop", "index": index})


END = sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}) + \
    sse({"type": "message_stop"})

# name -> (limits, body, the text that arrived before the limit was passed)
CASES: dict[str, tuple[Limits, bytes, str]] = {
    "max_event_bytes": (
        Limits(max_event_bytes=500),
        start() + block(0) + delta(0, "kept ") + delta(0, "x" * 600) + stop(0) + END, "kept "),
    "max_tool_arguments_bytes": (
        Limits(max_tool_arguments_bytes=40),
        start() + block(0) + delta(0, "calling") + stop(0) + block(1, "tool_use")
        + args(1, '{"q": "' + "a" * 20) + args(1, "b" * 30 + '"}') + stop(1) + END, "calling"),
    "max_message_bytes": (
        Limits(max_message_bytes=100),
        start() + block(0) + b"".join(delta(0, "y" * 30) for _ in range(5)) + stop(0) + END,
        "y" * 90),
    "max_groups": (
        Limits(max_groups=3),
        start() + b"".join(block(i) + delta(i, f"b{i} ") + stop(i) for i in range(5)) + END,
        "b0 b1 b2 "),
}


def check(error: LimitExceededError, name: str, limits: Limits, before: str) -> None:
    assert error.limit == name and error.maximum == getattr(limits, name)
    assert name in str(error)
    partial = error.partial
    assert isinstance(partial, Message) and not partial.complete
    assert partial.text == before


@pytest.mark.parametrize("name", list(CASES))
def test_each_limit_through_assemble(name: str) -> None:
    limits, body, before = CASES[name]
    assert assemble(body).complete  # the same body is fine with the default limits
    with pytest.raises(LimitExceededError) as caught:
        assemble(body, limits=limits)
    check(caught.value, name, limits, before)


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(CASES))
async def test_each_limit_through_run(name: str) -> None:
    limits, body, before = CASES[name]
    seen: list[Any] = []
    pieces = [body[i:i + 37] for i in range(0, len(body), 37)]
    with pytest.raises(LimitExceededError) as caught:
        await streamflow.run(from_iterable(pieces), seen.append, limits=limits)
    check(caught.value, name, limits, before)
    assert all(e.event_type == "delta" for e in seen)


def test_max_event_bytes_on_ndjson_and_eventstream_bodies() -> None:
    small = Limits(max_event_bytes=300)
    line = {"model": "m", "message": {"role": "assistant", "content": "ok "}, "done": False}
    big = dict(line, message={"role": "assistant", "content": "z" * 400})
    ndjson = (json.dumps(line) + "\n" + json.dumps(big) + "\n").encode()
    with pytest.raises(LimitExceededError) as caught:
        assemble(ndjson, "ollama", limits=small)
    check(caught.value, "max_event_bytes", small, "ok ")

    def aws(text: str) -> bytes:
        payload = json.dumps({"contentBlockIndex": 0, "delta": {"text": text}}).encode()
        return encode_message({":event-type": "contentBlockDelta", ":message-type": "event",
                               ":content-type": "application/json"}, payload)
    body = encode_message({":event-type": "messageStart", ":message-type": "event"},
                          b'{"role": "assistant"}') + aws("ok ") + aws("w" * 400)
    with pytest.raises(LimitExceededError) as caught:
        assemble(body, "bedrock", limits=small)
    check(caught.value, "max_event_bytes", small, "ok ")


def test_defaults_are_documented() -> None:
    assert DEFAULT_LIMITS == Limits()
    assert (DEFAULT_LIMITS.max_event_bytes, DEFAULT_LIMITS.max_tool_arguments_bytes,
            DEFAULT_LIMITS.max_message_bytes, DEFAULT_LIMITS.max_groups) == \
        (32 * MiB, 16 * MiB, 256 * MiB, 10_000)
    doc = Limits.__doc__ or ""
    for text in ("32 MiB", "16 MiB", "256 MiB", "10,000", "600"):
        assert text in doc


GIB = 1024 * MiB
CHUNK = 256 * 1024


class OneLine:
    """A lazy 1 GiB body of a single unterminated SSE line; counts what was read."""

    def __init__(self, head: bytes = b"data: ") -> None:
        self.head = head
        self.read = 0

    def __iter__(self) -> Iterator[bytes]:
        piece = b"x" * CHUNK
        yield self.head
        while self.read < GIB:
            self.read += CHUNK
            yield piece


@pytest.mark.parametrize(("limits", "head", "dialect"), [
    (None, b"data: ", "auto"),                           # the default 32 MiB limit
    (Limits(max_event_bytes=MiB), b"data: ", "auto"),
    (Limits(max_event_bytes=MiB), b'{"model": "', "ollama"),  # NDJSON
])
def test_a_1gb_unterminated_line_fails_fast_with_bounded_memory(
        limits: Limits | None, head: bytes, dialect: str) -> None:
    body = OneLine(head)
    limit = (limits or DEFAULT_LIMITS).max_event_bytes
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceededError) as caught:
            assemble(iter(body), dialect, limits=limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.limit == "max_event_bytes"
    assert limit <= body.read <= limit + 2 * CHUNK  # it stopped right at the limit...
    assert peak < 2 * limit + 8 * MiB               # ...holding about the limit, not 1 GiB


@pytest.mark.anyio
async def test_a_1gb_unterminated_line_through_run_stops_reading_at_the_limit() -> None:
    body = OneLine()
    limits = Limits(max_event_bytes=MiB)
    with pytest.raises(LimitExceededError):
        await streamflow.run(from_iterable(lambda: iter(body)), limits=limits)
    assert MiB <= body.read <= MiB + 2 * CHUNK


def test_a_flood_of_unknown_events_stops_at_max_groups_with_the_text_kept() -> None:
    """Unknown events are kept whole, so they count against ``max_groups``: bounded."""
    head = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            b'"model":"x","role":"assistant","content":[],"usage":{"input_tokens":1}}}\n\n'
            b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text",'
            b'"text":""}}\n\ndata: {"type":"content_block_delta","index":0,"delta":'
            b'{"type":"text_delta","text":"kept"}}\n\n')
    flood = b'data: {"type":"from_the_future","n":1}\n\n' * 50
    with pytest.raises(LimitExceededError) as caught:
        assemble(head + flood, "anthropic", limits=Limits(max_groups=20))
    assert caught.value.limit == "max_groups"
    partial = caught.value.partial
    assert partial is not None and partial.text == "kept"
    assert len(partial.provider["unknown_events"]) == 19  # the text group is the 20th


def test_kept_unknown_events_reach_the_message_in_order() -> None:
    body = (b'data: {"type":"message_start","message":{"id":"m","model":"x","role":"assistant",'
            b'"content":[],"usage":{"input_tokens":1}}}\n\n'
            + b"".join(b'data: {"type":"from_the_future","n":%d}\n\n' % i for i in range(3))
            + b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
              b'"usage":{"output_tokens":1}}\n\ndata: {"type":"message_stop"}\n\n')
    message = assemble(body, "anthropic")
    assert [e["n"] for e in message.provider["unknown_events"]] == [0, 1, 2]
