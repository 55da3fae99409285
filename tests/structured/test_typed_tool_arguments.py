"""accumulate_json(tools=...): each registered tool's arguments typed while they stream."""

from __future__ import annotations

from typing import Any, Literal

import reactivex

from streamflow import ToolRegistry
from streamflow.core.events import TextItem, ToolCallItem, UniEvent
from streamflow.reactive.operators import ToolCallState, accumulate_json

tools = ToolRegistry()


@tools.tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius",
                days: int = 1) -> dict[str, Any]:
    """Weather for a city."""
    return {}


def _call(name: str, call_id: str, *fragments: str, done: Any = None) -> list[UniEvent]:
    items = [ToolCallItem("tool_call.delta", name if i == 0 else "", call_id if i == 0 else "",
                          f) for i, f in enumerate(fragments)]
    items.append(ToolCallItem("tool_call.done", name, call_id,
                              "".join(fragments) if done is None else done))
    return [UniEvent("delta", [item]) for item in items]


def _states(events: list[UniEvent]) -> list[tuple[ToolCallState, Any]]:
    seen: list[tuple[ToolCallState, Any]] = []
    reactivex.from_iterable(events).pipe(accumulate_json(tools=tools)).subscribe(
        lambda s: seen.append((s, s.partial)))
    return seen


def test_a_registered_tools_arguments_stream_as_its_partial_model() -> None:
    call = _call("get_weather", "c1", '{"ci', 'ty": "Lis', 'bon", "unit": "cel', 'sius", ',
                 '"days": 3', "}")
    events = [UniEvent("delta", [TextItem("text.delta", "hi")]), *call]
    seen = _states(events)
    partials = [p for _, p in seen]
    assert type(partials[0]).__name__.startswith("Partial") and partials[0].city is None
    assert partials[1].city == "Lis"
    assert partials[2].city == "Lisbon" and partials[2].unit is None  # a cut Literal waits
    assert partials[3].unit == "celsius" and partials[3].days is None  # "3" may grow
    final, last = seen[-1]
    assert final.done and final.errors is None
    assert final.validated == {"city": "Lisbon", "unit": "celsius", "days": 3}
    assert last.days == 3


def test_arguments_that_fail_the_schema_are_reported_at_the_done() -> None:
    seen = _states(_call("get_weather", "c2", '{"unit": "kelvin", "days": "many"}'))
    final = seen[-1][0]
    assert final.done and final.validated is None
    assert final.errors is not None
    assert {tuple(e["loc"]) for e in final.errors} == {("city",), ("unit",), ("days",)}
    assert all(set(e) <= {"type", "loc", "msg", "input"} for e in final.errors)


def test_an_unregistered_tool_stays_untyped() -> None:
    seen = _states(_call("search", "c3", '{"q": "x"}'))
    state, partial = seen[-1]
    assert partial is None and state.tool is None and state.errors is None
    assert state.snapshot() == {"q": "x"}
