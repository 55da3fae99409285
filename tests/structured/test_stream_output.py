"""stream(..., output=T) / stream_sync over every dialect's bytes, at any chunking.

The bodies are made by encoding a JSON answer (as text, and as the one tool call that
carries it) with each dialect's own encoder, then decoded by streamflow as any body is.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import streamflow
from streamflow.core.errors import IncompleteStreamError, OutputValidationError
from streamflow.core.events import TextItem, ToolCallItem, UniEvent, Usage
from streamflow.core.structured.snapshots import _covers
from streamflow.core.structured.updates import plain
from streamflow.wire.dialects import get_encoder

DIALECTS = ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama", "uni"]


class Hour(BaseModel):
    hour: int
    temperature: float


class Weather(BaseModel):
    city: str
    conditions: Literal["sunny", "cloudy", "rain"]
    hours: list[Hour]
    advice: str


WEATHER = Weather(city="Lisbon — «Baixa»", conditions="cloudy",
                  hours=[Hour(hour=h, temperature=17.5 - h / 2) for h in range(18, 23)],
                  advice='Bring a light jacket; it "feels" cooler.\nNo umbrella.')
ANSWER = WEATHER.model_dump_json(indent=2)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def text_events(text: str, *, stop: bool = True) -> list[UniEvent]:
    items: list[Any] = [TextItem("text.delta", p) for p in _pieces(text, 7)]
    items.append(TextItem("text.done", text))
    events = [UniEvent("delta", [item], created_at=1_700_000_000_000) for item in items]
    if stop:
        events.append(UniEvent("stop", [], Usage(0, 10, None, 20), "stop",
                               created_at=1_700_000_000_100))
    return events


def tool_events(arguments: str) -> list[UniEvent]:
    first = ToolCallItem("tool_call.delta", "weather", "call_1", "")
    parts = [ToolCallItem("tool_call.delta", "", "", p) for p in _pieces(arguments, 5)]
    done = ToolCallItem("tool_call.done", "weather", "call_1", json.loads(arguments))
    events = [UniEvent("delta", [i], created_at=1_700_000_000_000) for i in [first, *parts, done]]
    events.append(UniEvent("stop", [], Usage(0, 10, None, 20), "tool_call",
                           created_at=1_700_000_000_100))
    return events


def body(events: list[UniEvent], dialect: str) -> bytes:
    return b"".join(streamflow.encode(events, dialect))


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


def _check_growth(snapshots: list[Any]) -> None:
    for before, after in itertools.pairwise(s for s in snapshots if s is not None):
        assert _covers(plain(after), plain(before)), (before, after)


@settings(max_examples=25, deadline=None)
@given(dialect=st.sampled_from(DIALECTS), cuts=st.lists(st.integers(0, 1 << 16), max_size=30),
       tool=st.booleans())
def test_sync_any_dialect_any_chunking(dialect: str, cuts: list[int], tool: bool) -> None:
    events = tool_events(WEATHER.model_dump_json()) if tool else text_events(ANSWER)
    chunks = chunked(body(events, dialect), cuts)
    snapshots: list[Any] = []
    with streamflow.stream_sync(chunks, dialect=dialect, output=Weather) as s:
        for _event in s:
            snapshots.append(s.partial_output)
        final = s.final_output()
    assert final == WEATHER
    _check_growth(snapshots)
    assert plain(snapshots[-1]) == WEATHER.model_dump()
    if not tool:  # '{\n  "ci': an object has begun, no field yet
        assert plain(snapshots[0]) == {}


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fence", [False, True])
async def test_async_text_answer_in_a_fence(dialect: str, fence: bool) -> None:
    text = f"Here it is:\n```json\n{ANSWER}\n```\n" if fence else ANSWER
    snapshots: list[Any] = []
    async with streamflow.stream(body(text_events(text), dialect), dialect=dialect,
                                 output=Weather, output_from="text") as s:
        async for _event in s:
            snapshots.append(s.partial_output)
        assert await s.final_output() == WEATHER
    _check_growth(snapshots)
    cities = [p.city for p in snapshots if p is not None and p.city]
    assert cities[0] != WEATHER.city and cities[-1] == WEATHER.city  # a cut string grew


@pytest.mark.anyio
async def test_tool_mode_and_typed_dicts_and_schema_dicts() -> None:
    data = body(tool_events(WEATHER.model_dump_json()), "anthropic")
    async with streamflow.stream(data, output=dict[str, Any], output_from="tool") as s:
        assert await s.final_output() == json.loads(WEATHER.model_dump_json())
    schema = Weather.model_json_schema()
    with streamflow.stream_sync(data, output=schema) as sync:
        assert sync.final_output() == json.loads(WEATHER.model_dump_json())


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_cut_stream_raises_its_own_error_with_the_last_snapshot(dialect: str) -> None:
    events = text_events(ANSWER, stop=False)[:-1]
    encoder = get_encoder(dialect)()
    data = b"".join(encoder.feed(e) for e in events)  # the body, cut before its end
    async with streamflow.stream(data, dialect=dialect, output=Weather) as s:
        with pytest.raises(IncompleteStreamError) as caught:
            await s.final_output()
    error = caught.value
    assert error.partial is not None and error.partial.text == ANSWER[:len(error.partial.text)]
    assert error.partial_output is not None
    assert error.partial_output.city == WEATHER.city and error.partial_output.advice is not None


@pytest.mark.anyio
async def test_a_schema_mismatch_is_the_typed_error_with_raw_text_and_errors() -> None:
    wrong = ANSWER.replace('"cloudy"', '"foggy"').replace('"hour": 20', '"hour": "late"')
    async with streamflow.stream(body(text_events(wrong), "openai-chat"),
                                 output=Weather) as s:
        with pytest.raises(OutputValidationError) as caught:
            await s.final_output()
        assert s.partial_output.city == WEATHER.city  # the snapshot is still readable
    error = caught.value
    assert isinstance(error, streamflow.StreamflowError)
    assert json.loads(error.raw)["conditions"] == "foggy"
    assert {tuple(e["loc"]) for e in error.errors} == {("conditions",), ("hours", 2, "hour")}
    assert error.partial is not None and error.partial.finish_reason == "stop"
    assert error.partial_output is not None and error.partial_output.city == WEATHER.city


def test_without_output_the_readers_say_how_to_ask_for_one() -> None:
    with streamflow.stream_sync(body(text_events("hi"), "uni"), dialect="uni") as s:
        with pytest.raises(RuntimeError, match=r"output=T"):
            s.partial_output  # noqa: B018
        s.final_message()
