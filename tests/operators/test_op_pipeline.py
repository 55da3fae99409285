"""pipeline(): bytes -> UniEvents in one hop, per-subscription state, typed errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import reactivex.operators as ops
from hypothesis import given, settings
from hypothesis import strategies as st

import streamflow
from streamflow import ProviderError, ToolCallArgumentParseError
from streamflow.core.errors import NoScopeError
from streamflow.reactive.operators import pipeline
from streamflow.reactive.operators.pipeline import pipeline as pipeline_from_module
from streamflow.reactive.sources import from_bytes, from_iterable

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
CLOCK = {"clock": lambda: 1000}


def collect(observable: Any) -> tuple[list[Any], list[Exception], list[bool]]:
    items: list[Any] = []
    errors: list[Exception] = []
    done: list[bool] = []
    observable.subscribe(items.append, errors.append, lambda: done.append(True))
    return items, errors, done


def test_every_operator_is_importable_as_module_and_function() -> None:
    import importlib

    for name in ("frame", "parse_wire", "decode", "group_by_block", "accumulate_json",
                 "tap_usage", "on_error", "pipeline"):
        module = importlib.import_module(f"streamflow.reactive.operators.{name}")
        assert getattr(module, name) is getattr(streamflow.reactive.operators, name)
    assert not hasattr(streamflow.reactive.operators, "normalize")  # renamed to decode in 0.2
    assert pipeline_from_module is pipeline is streamflow.pipeline


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 120), min_size=1, max_size=8))
def test_any_chunking_gives_the_core_events(sizes: list[int]) -> None:
    chunks, pos, i = [], 0, 0
    while pos < len(TURN):
        chunks.append(TURN[pos:pos + sizes[i % len(sizes)]])
        pos += sizes[i % len(sizes)]
        i += 1
    events, errors, done = collect(from_iterable(chunks).pipe(pipeline(**CLOCK)))
    core = streamflow.StreamDecoder(**CLOCK)
    assert (errors, done) == ([], [True])
    assert [e.to_dict() for e in events] == [e.to_dict() for e in core.feed(TURN) + core.close()]


def test_two_subscriptions_to_one_cold_observable_have_independent_parsers() -> None:
    events = from_bytes(TURN, chunk_size=9).pipe(pipeline())
    first, _, _ = collect(events)
    second, _, _ = collect(events)
    assert len(first) == len(second) == 17
    assert [e.event_type for e in first].count("stop") == 1
    assert [e.event_type for e in second].count("stop") == 1


def test_provider_error_mid_stream_keeps_the_partial() -> None:
    body = (DATA / "error_after_text.sse").read_bytes()
    events, errors, done = collect(from_bytes(body, chunk_size=5).pipe(pipeline()))
    assert done == [] and isinstance(errors[0], ProviderError)
    assert errors[0].partial is not None and errors[0].partial.text == "Partial answer"
    assert [e.content_items[0].text for e in events] == ["Partial ", "answer"]


def test_bad_tool_arguments_raise_in_place_of_the_done() -> None:
    body = (DATA / "bad_args.sse").read_bytes()
    events, errors, _ = collect(from_bytes(body).pipe(pipeline()))
    assert isinstance(errors[0], ToolCallArgumentParseError)
    assert errors[0].name == "broken" and errors[0].arguments == '{"city": "Paris",,}'
    assert [e.content_items[0].type for e in events] == ["tool_call.delta"] * 3


def test_an_error_stops_reading_the_source() -> None:
    pulled = 0
    body = (DATA / "bad_args.sse").read_bytes() + TURN * 50

    def chunks() -> Any:
        nonlocal pulled
        for i in range(0, len(body), 64):
            pulled += 1
            yield body[i:i + 64]

    _, errors, _ = collect(from_iterable(chunks).pipe(pipeline(), ops.take(1000)))
    assert isinstance(errors[0], ToolCallArgumentParseError)
    assert pulled < len(body) // 64 // 10


def test_a_streamflow_source_and_a_reactivex_one_give_the_same_events_and_end() -> None:
    """A streamflow source pushes to the operator's guard directly, any other observable
    through reactivex's observer: the same events, one end, nothing after it."""
    import reactivex

    body = (DATA / "error_after_text.sse").read_bytes()
    pieces = [body[i:i + 7] for i in range(0, len(body), 7)] + [TURN]  # more after the error
    ours = collect(from_iterable(pieces).pipe(pipeline()))
    theirs = collect(reactivex.from_iterable(pieces).pipe(pipeline()))
    for events, errors, done in (ours, theirs):
        assert [e.content_items[0].text for e in events] == ["Partial ", "answer"]
        assert len(errors) == 1 and isinstance(errors[0], ProviderError) and done == []
    assert [type(e) for e in ours[1]] == [type(e) for e in theirs[1]]


def test_a_source_failing_to_subscribe_reaches_on_error_typed() -> None:
    async def chunks() -> Any:
        yield TURN

    events, errors, done = collect(streamflow.reactive.sources.from_async_iterable(chunks)
                                   .pipe(pipeline("anthropic")))
    assert events == [] and done == []
    assert len(errors) == 1 and isinstance(errors[0], NoScopeError)


def test_unknown_dialect_fails_when_the_operator_is_built() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        pipeline("no-such-dialect")
