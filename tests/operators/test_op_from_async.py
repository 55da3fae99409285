"""``from_async(fn)`` and ``stream(..., transforms=[fn])``: an async generator function as an
operator, with every operator's rules (state, errors, cancellation), on asyncio and trio."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import reactivex
from reactivex import operators as ops

import streamflow
from streamflow import CancelledStreamError, IncompleteStreamError, StreamDecoder, UniEvent
from streamflow.core.errors import NoScopeError
from streamflow.core.events import TextItem
from streamflow.reactive.operators import from_async, pipeline
from streamflow.reactive.sources import from_async_iterable, from_bytes

pytestmark = pytest.mark.anyio
BODY = (Path(__file__).parent.parent / "data" / "anthropic" / "kitchen_sink.sse").read_bytes()
EVENTS = StreamDecoder("anthropic").feed(BODY)
TEXT = "".join(e.item.text for e in EVENTS
               if isinstance(e.item, TextItem) and e.item.type == "text.delta")


async def no_thinking(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
    """Drop the thinking groups (a stateless transform)."""
    async for event in events:
        if event.item is None or "thinking" not in event.item.kind:
            yield event


def kinds(message: streamflow.Message) -> list[str]:
    return [item.kind for item in message.items]


async def test_stream_transforms_change_what_is_iterated_and_assembled() -> None:
    async with streamflow.stream(BODY, transforms=[no_thinking]) as s:
        seen = [event async for event in s]
    assert all("thinking" not in e.item.kind for e in seen if e.item is not None)
    assert s.message.complete and kinds(s.message) == ["text", "tool_call"]
    assert s.message.text == TEXT


async def test_run_reactive_style_and_a_plain_operator_mix() -> None:
    seen: list[str] = []
    message = await streamflow.run(from_bytes(BODY).pipe(pipeline(), from_async(no_thinking)),
                                   lambda e: seen.append(e.event_type))
    assert kinds(message) == ["text", "tool_call"] and seen[-1] == "stop"
    kept = await streamflow.run(BODY, transforms=[ops.filter(lambda e: True), no_thinking])
    assert kinds(kept) == ["text", "tool_call"]


async def test_state_is_per_subscription() -> None:
    calls: list[int] = []

    async def number(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
        count = 0  # the generator's locals: one set per subscription
        async for event in events:
            count += 1
            yield event
        calls.append(count)

    operator = from_async(number)
    for _ in range(2):
        await streamflow.run(from_bytes(BODY).pipe(pipeline(), operator))
    assert calls == [len(EVENTS), len(EVENTS)]


async def test_the_upstream_error_is_raised_inside_the_generator() -> None:
    caught: list[BaseException] = []

    async def watch(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
        try:
            async for event in events:
                yield event
        except IncompleteStreamError as exc:
            caught.append(exc)
            raise

    cut = BODY[:BODY.index(b"event: message_stop")]
    with pytest.raises(IncompleteStreamError) as error:
        await streamflow.run(cut, transforms=[watch])
    assert caught == [error.value]
    assert error.value.partial is not None and error.value.partial.id == "msg_kitchen"


async def test_an_error_the_generator_raises_ends_the_stream_through_on_error() -> None:
    async def fail(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
        async for event in events:
            yield event
            raise LookupError("the transform failed")

    errors: list[Exception] = []

    class Sink:
        def on_next(self, value: object) -> None: ...
        def on_error(self, error: Exception) -> None:
            errors.append(error)
        def on_completed(self) -> None: ...

    with pytest.raises(LookupError, match="the transform failed"):
        await streamflow.run(BODY, Sink(), transforms=[fail])
    assert len(errors) == 1 and isinstance(errors[0], LookupError)


async def test_returning_early_stops_reading_the_upstream() -> None:
    state = {"read": 0, "closed": False}

    async def chunks() -> AsyncIterator[bytes]:
        try:
            for line in BODY.splitlines(keepends=True):
                state["read"] += 1
                yield line
        finally:
            state["closed"] = True

    async def first_two(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
        count = 0
        async for event in events:
            yield event
            count += 1
            if count == 2:
                return

    with pytest.raises(CancelledStreamError) as caught:  # no stop event: run's rule
        await streamflow.run(from_async_iterable(chunks()), transforms=[first_two])
    assert state["closed"] and state["read"] < len(BODY.splitlines())
    assert caught.value.partial is not None and len(caught.value.partial.items) >= 1


async def test_leaving_the_stream_block_cancels_the_generator() -> None:
    finished: list[str] = []

    async def slow(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
        try:
            async for event in events:
                yield event
        finally:
            finished.append("closed")

    async with streamflow.stream(BODY, transforms=[slow]) as s:
        async for _ in s:
            break
    assert finished == ["closed"]


def test_outside_a_scope_the_subscription_fails_with_no_scope() -> None:
    errors: list[Exception] = []
    reactivex.from_iterable(EVENTS).pipe(from_async(no_thinking)).subscribe(
        on_error=errors.append)
    assert len(errors) == 1 and isinstance(errors[0], NoScopeError)


def test_not_a_function_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        from_async(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        streamflow.stream(BODY, transforms=[42])
