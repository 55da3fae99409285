"""accumulate_json() and tap_usage(), alone and composed with pipeline()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import reactivex

from streamflow import LimitExceededError, Limits, ToolCallArgumentParseError, UniEvent, Usage
from streamflow.core.events import TextItem, ToolCallItem
from streamflow.reactive.operators import ToolCallState, accumulate_json, pipeline, tap_usage
from streamflow.reactive.sources import from_bytes

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()


def tool_events(*fragments: str, done: Any = None) -> list[UniEvent]:
    items = [ToolCallItem("tool_call.delta", "lookup" if i == 0 else "", "call_1" if i == 0 else "",
                          f) for i, f in enumerate(fragments)]
    items.append(ToolCallItem("tool_call.done", "lookup", "call_1",
                              "".join(fragments) if done is None else done))
    return [UniEvent("delta", [TextItem("text.delta", "hi")])] + [
        UniEvent("delta", [i]) for i in items]


def test_states_grow_and_snapshots_are_on_demand() -> None:
    snapshots: list[Any] = []
    states: list[ToolCallState] = []

    def on_state(state: ToolCallState) -> None:
        states.append(state)
        snapshots.append(state.snapshot())

    from_bytes(TURN, chunk_size=11).pipe(pipeline(), accumulate_json()).subscribe(on_state)
    assert all(s is states[0] for s in states)  # one live object per call
    first = states[0]
    assert (first.name, first.tool_call_id, first.index) == ("get_weather", "toolu_1", 0)
    assert snapshots[:3] == [None, {}, {"city": "Par"}]
    assert snapshots[-1] == {"city": "Paris", "units": "metric"} and states[0].done
    assert states[0].text == '{"city": "Paris", "units": "metric"}'


def test_malformed_arguments_from_a_foreign_pipeline_fail_strictly() -> None:
    errors: list[Exception] = []
    seen: list[Any] = []
    reactivex.from_iterable(tool_events('{"q": ', '"x"')).pipe(accumulate_json()).subscribe(
        lambda s: seen.append(s.snapshot()), errors.append)
    assert seen == [{}, {"q": "x"}]  # the partial parse is lenient, the strict one is not
    assert isinstance(errors[0], ToolCallArgumentParseError) and errors[0].name == "lookup"


def test_string_arguments_at_done_are_parsed() -> None:
    states: list[ToolCallState] = []
    reactivex.from_iterable(tool_events('{"q": ', '1}')).pipe(accumulate_json()).subscribe(
        states.append)
    assert states[-1].done and states[-1].arguments == {"q": 1}


def test_argument_limit() -> None:
    errors: list[Exception] = []
    reactivex.from_iterable(tool_events('{"q": "', "x" * 50, '"}')).pipe(
        accumulate_json(limits=Limits(max_tool_arguments_bytes=20))).subscribe(
        on_error=errors.append)
    assert isinstance(errors[0], LimitExceededError)
    assert errors[0].limit == "max_tool_arguments_bytes"


def test_tap_usage_reports_once_and_passes_the_same_events() -> None:
    usages: list[Usage] = []
    plain: list[UniEvent] = []
    tapped: list[UniEvent] = []
    source = reactivex.from_iterable(_collect(from_bytes(TURN).pipe(pipeline())))
    source.subscribe(plain.append)
    source.pipe(tap_usage(usages.append)).subscribe(tapped.append)
    assert tapped == plain and all(a is b for a, b in zip(tapped, plain, strict=True))
    assert len(usages) == 1
    assert (usages[0].prompt_tokens, usages[0].response_tokens) == (12, 42)


def _collect(observable: Any) -> list[Any]:
    out: list[Any] = []
    observable.subscribe(out.append)
    return out


def test_tap_usage_is_called_exactly_once_per_subscription_even_with_a_repeated_stop() -> None:
    usages: list[Usage] = []
    stop = UniEvent("stop", [], Usage(prompt_tokens=1, response_tokens=2, cost=0.003), "stop")
    op = tap_usage(usages.append)
    reactivex.from_iterable([stop, stop]).pipe(op).subscribe()
    reactivex.from_iterable([stop]).pipe(op).subscribe()
    assert [u.cost for u in usages] == [0.003, 0.003]


def test_tap_usage_is_not_called_for_a_failed_stream() -> None:
    usages: list[Usage] = []
    errors: list[Exception] = []
    from_bytes((DATA / "error_after_text.sse").read_bytes()).pipe(
        pipeline(), tap_usage(usages.append)).subscribe(on_error=errors.append)
    assert usages == [] and len(errors) == 1


def test_a_failing_callback_fails_the_stream() -> None:
    def boom(_: Usage) -> None:
        raise RuntimeError("meter down")

    errors: list[Exception] = []
    from_bytes(TURN).pipe(pipeline(), tap_usage(boom)).subscribe(on_error=errors.append)
    assert isinstance(errors[0], RuntimeError)


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_composed_ui_and_tools_views_agree(chunk: int) -> None:
    events = _collect(from_bytes(TURN, chunk_size=chunk).pipe(pipeline()))
    states = _collect(reactivex.from_iterable(events).pipe(accumulate_json()))
    usage: list[Usage] = []
    again = _collect(reactivex.from_iterable(events).pipe(tap_usage(usage.append)))
    assert states[-1].arguments == events[-2].content_items[0].arguments
    assert again == events and usage[0] is events[-1].usage_metadata
