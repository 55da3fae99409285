"""OutputParser (sans-IO): partial snapshots that only grow, a strict final, typed errors."""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typing_extensions import TypedDict

from streamflow.core.errors import LimitExceededError, OutputValidationError
from streamflow.core.events import TextItem, ToolCallItem, UniEvent
from streamflow.core.message import Message
from streamflow.core.structured import OutputParser, json_text, partial_type
from streamflow.core.structured.snapshots import _covers


class Place(BaseModel):
    city: str
    country: str


class Weather(BaseModel):
    place: Place
    temperature: float
    conditions: Literal["sunny", "cloudy", "rainy"]
    hourly: list[int]
    notes: dict[str, str]


WEATHER = Weather(place=Place(city="Lisbon", country="PT"), temperature=17.5,
                  conditions="cloudy", hourly=[17, 16, 15, 13, -2],
                  notes={"wind": "NW 22 km/h", "tip": "bring a \"light\" jacket"})


class Forecast(TypedDict):
    day: str
    high: int


@dataclasses.dataclass
class Point:
    x: int
    label: str


def _text(fragment: str) -> UniEvent:
    return UniEvent(event_type="delta", content_items=[TextItem(text=fragment)])


def _message(text: str = "", calls: list[ToolCallItem] | None = None) -> Message:
    items: list[Any] = [TextItem(type="text.done", text=text)] if text else []
    items += calls or []
    return Message(items=items, finish_reason="stop")


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if dataclasses.is_dataclass(value):
        return {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
    return value


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40),
       fenced=st.booleans())
def test_any_chunking_gives_growing_snapshots_and_the_last_equals_the_final(
        cuts: list[int], fenced: bool) -> None:
    body = WEATHER.model_dump_json(indent=1)
    text = f"```json\n{body}\n```" if fenced else body
    parser = OutputParser(Weather)
    previous: Any = None
    for chunk in _chunks(text, cuts):
        parser.feed(_text(chunk))
        snapshot = parser.snapshot
        if previous is not None:
            assert snapshot is not None
            assert _covers(_plain(snapshot), _plain(previous)), (previous, snapshot)
        previous = snapshot
    final = parser.final(_message(text))
    assert final == WEATHER
    assert _plain(parser.snapshot) == WEATHER.model_dump()


def test_nothing_parses_before_the_first_brace_and_reading_never_raises() -> None:
    parser = OutputParser(Weather)
    assert parser.snapshot is None
    parser.feed(_text("```js"))
    assert parser.snapshot is None
    parser.feed(_text("on\n{\"temperature\": 1"))
    snap = parser.snapshot
    assert type(snap).__name__ == "PartialWeather"
    assert snap.temperature is None  # "1" may still become "17": left out until it ends
    parser.feed(_text("7, \"conditions\": \"clou"))
    snap = parser.snapshot
    assert snap.temperature == 17 and snap.conditions is None  # a cut Literal is not shown
    parser.feed(_text("dy\", \"place\": {\"ci"))
    snap = parser.snapshot
    assert snap.conditions == "cloudy" and snap.place is not None and snap.place.city is None


def test_a_value_of_the_wrong_type_keeps_the_last_good_snapshot() -> None:
    parser = OutputParser(Weather)
    parser.feed(_text('{"place": {"city": "Lis'))
    assert parser.snapshot.place.city == "Lis"
    parser.feed(_text('bon"}, "hourly": ["not a number"'))
    assert parser.snapshot.place.city == "Lisbon"  # validated up to the bad value
    assert parser.snapshot.hourly == []  # the bad item is left out, the list stays
    with pytest.raises(OutputValidationError) as caught:
        parser.final(_message('{"place": {"city": "Lisbon"}, "hourly": ["not a number"]}'))
    error = caught.value
    assert error.partial is not None and error.raw.startswith('{"place"')
    assert {tuple(e["loc"]) for e in error.errors} >= {("place", "country"), ("hourly", 0)}
    assert error.partial_output.place.city == "Lisbon"


def test_invalid_json_is_the_typed_error_with_the_raw_text() -> None:
    parser = OutputParser(Weather)
    parser.feed(_text("{\"temperature\": 17,,}"))
    with pytest.raises(OutputValidationError) as caught:
        parser.final(_message("{\"temperature\": 17,,}"))
    assert caught.value.errors[0]["type"] == "json_invalid"
    assert caught.value.raw == "{\"temperature\": 17,,}"


def test_tool_mode_reads_the_output_calls_arguments_only() -> None:
    parser = OutputParser(Forecast, output_from="tool", tool_name="forecast")
    parser.feed(UniEvent(event_type="delta", content_items=[
        ToolCallItem(name="search", tool_call_id="c1", arguments='{"q": "x"')]))
    parser.feed(UniEvent(event_type="delta", content_items=[
        ToolCallItem(type="tool_call.done", name="search", tool_call_id="c1",
                     arguments={"q": "x"})]))
    parser.feed(UniEvent(event_type="delta", content_items=[
        ToolCallItem(name="forecast", tool_call_id="c2", arguments='{"day": "Mon')]))
    assert parser.snapshot == {"day": "Mon"}
    parser.feed(UniEvent(event_type="delta", content_items=[
        ToolCallItem(arguments='day", "high": 21}')]))
    assert parser.snapshot == {"day": "Monday", "high": 21}
    done = ToolCallItem(type="tool_call.done", name="forecast", tool_call_id="c2",
                        arguments={"day": "Monday", "high": 21})
    search = ToolCallItem(type="tool_call.done", name="search", tool_call_id="c1",
                          arguments={"q": "x"})
    assert parser.final(_message(calls=[search, done])) == {"day": "Monday", "high": 21}


def test_auto_reads_the_one_tool_call_when_there_is_no_text() -> None:
    parser = OutputParser(Point)
    parser.feed(UniEvent(event_type="delta", content_items=[
        ToolCallItem(name="point", tool_call_id="c", arguments='{"x": 3, "label": "ori')]))
    assert parser.snapshot == partial_type(Point)(x=3, label="ori")
    done = ToolCallItem(type="tool_call.done", name="point", tool_call_id="c",
                        arguments={"x": 3, "label": "origin"})
    assert parser.final(_message(calls=[done])) == Point(x=3, label="origin")
    # with text beside the call, auto reads the text
    text = json.dumps({"x": 1, "label": "t"})
    assert OutputParser(Point).final(_message(text, [done])) == Point(x=1, label="t")


def test_a_json_schema_dict_gives_plain_snapshots_and_a_checked_final() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}},
              "required": ["n"], "additionalProperties": False}
    parser = OutputParser(schema)
    parser.feed(_text('{"n": 4'))
    assert parser.snapshot == {}
    parser.feed(_text("2}"))
    assert parser.snapshot == {"n": 42}
    assert parser.final(_message('{"n": 42}')) == {"n": 42}
    with pytest.raises(OutputValidationError) as caught:
        parser.final(_message('{"n": "x", "m": 1}'))
    assert {e["type"] for e in caught.value.errors} == {"type", "additionalProperties"}


def test_lists_and_typeddicts_as_output() -> None:
    parser = OutputParser(list[Forecast])
    parser.feed(_text('[{"day": "Mon", "high": 20}, {"da'))
    assert parser.snapshot == [{"day": "Mon", "high": 20}, {}]
    assert parser.final(_message('[{"day": "Mon", "high": 20}]')) == [{"day": "Mon", "high": 20}]


def test_the_collected_text_is_bounded() -> None:
    parser = OutputParser(Weather, max_bytes=10)
    parser.feed(_text("{\"place\":"))
    with pytest.raises(LimitExceededError):
        parser.feed(_text(" {\"city\""))


def test_json_text_strips_a_fence_with_prose_before_it() -> None:
    assert json_text('Here you go:\n```json\n{"a": 1}\n```\nBye') == '{"a": 1}\n'
    assert json_text('{"a": "```"}') == '{"a": "```"}'
    assert json_text("```json") == ""


def test_partial_types_are_optional_recursively_and_cached() -> None:
    partial = partial_type(Weather)
    assert partial is partial_type(Weather)
    empty = partial()
    assert empty.place is None and empty.hourly is None
    nested = partial.model_validate({"place": {}})
    assert type(nested.place).__name__ == "PartialPlace"


class Node(BaseModel):
    name: str
    children: list[Node] = []


def test_a_recursive_model_derives_once() -> None:
    partial = partial_type(Node)
    value = partial.model_validate({"name": "a", "children": [{"children": [{}]}]})
    assert value.children[0].children[0].name is None
