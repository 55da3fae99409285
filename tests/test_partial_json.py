"""Tool-call arguments: strict parsing, and the lazily parsed, cached ArgumentBuffer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamflow.core.partial_json as pj
from streamflow.core.errors import LimitExceededError, ToolCallArgumentParseError
from streamflow.core.partial_json import ArgumentBuffer, parse_arguments


@pytest.mark.parametrize(("text", "value"), [
    ('{"a": 1}', {"a": 1}),
    (' \n{"city": "上海", "n": [1, 2.5, null, true]}\n',
     {"city": "上海", "n": [1, 2.5, None, True]}),
    ("", {}),
    ("   ", {}),
    ("{}", {}),
])
def test_parse_arguments_gives_an_object(text: str, value: dict[str, Any]) -> None:
    assert parse_arguments(text) == value


@pytest.mark.parametrize(("text", "why"), [
    ('{"a": 1', "not valid JSON"),           # cut short
    ('{"a": 1}}', "not valid JSON"),         # trailing garbage
    ("{'a': 1}", "not valid JSON"),          # not JSON
    ("[1, 2]", "JSON list"),
    ('"text"', "JSON str"),
    ("42", "JSON int"),
    ("null", "JSON NoneType"),
])
def test_parse_arguments_rejects_what_is_not_an_object(text: str, why: str) -> None:
    with pytest.raises(ToolCallArgumentParseError) as info:
        parse_arguments(text, tool_call_id="call_1", name="get_weather")
    err = info.value
    assert why in err.message and "get_weather" in err.message
    assert (err.arguments, err.tool_call_id, err.name) == (text, "call_1", "get_weather")
    assert err.to_dict()["tool_call_id"] == "call_1"


def test_snapshot_grows_with_the_fragments() -> None:
    buf = ArgumentBuffer()
    assert buf.snapshot() is None
    seen = []
    for fragment in ['{"loc', 'ation": "Pa', 'ris", "days": [1', ", 2", "]}"]:
        buf.append(fragment)
        seen.append(buf.snapshot())
    assert seen == [{}, {"location": "Pa"}, {"location": "Paris", "days": [1]},
                    {"location": "Paris", "days": [1, 2]}, {"location": "Paris", "days": [1, 2]}]
    assert buf.parse() == {"location": "Paris", "days": [1, 2]}
    assert buf.text == '{"location": "Paris", "days": [1, 2]}' and len(buf) == len(buf.text)


def test_snapshot_keeps_the_last_good_value_when_the_text_cannot_parse() -> None:
    buf = ArgumentBuffer()
    buf.append('{"a": 1,')
    assert buf.snapshot() == {"a": 1}
    buf.append(" oops")
    assert buf.snapshot() == {"a": 1}
    with pytest.raises(ToolCallArgumentParseError):
        buf.parse(name="f")


def test_snapshot_is_cached_until_the_next_fragment(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = pj.from_json

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(pj, "from_json", counting)
    buf = ArgumentBuffer()
    for i in range(5_000):  # appending never joins or parses
        buf.append(f'{{"k{i}": ' if i == 0 else f"{i}, \"k{i}\": ")
    assert calls == [] and len(buf._parts) == 5_000
    first = buf.snapshot()
    assert buf.snapshot() is first and len(calls) == 1  # cached: polled twice, parsed once
    buf.append("")
    assert buf.snapshot() is first and len(calls) == 1  # an empty fragment changes nothing
    buf.append("1}")
    assert buf.snapshot() is not first and len(calls) == 2
    assert len(buf._parts) == 1  # joined when asked, then kept joined


def test_the_limit_rejects_the_fragment_that_passes_it() -> None:
    buf = ArgumentBuffer(limit=10)
    buf.append('{"a": ')
    with pytest.raises(LimitExceededError) as info:
        buf.append('"0123456789"}')
    assert info.value.limit == "max_tool_arguments_bytes"
    assert buf.text == '{"a": ' and len(buf) == 6  # what came before is intact
    buf.append("1}")
    assert buf.parse() == {"a": 1}


OBJ = st.dictionaries(
    st.text(max_size=6),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6)
                 | st.floats(allow_nan=False, allow_infinity=False),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8),
    max_size=5)


@settings(max_examples=200, deadline=None)
@given(obj=OBJ, ascii_only=st.booleans(), data=st.data())
def test_any_fragmentation_parses_to_the_object(obj: dict[str, Any], ascii_only: bool,
                                                data: st.DataObject) -> None:
    text = json.dumps(obj, ensure_ascii=ascii_only)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    buf = ArgumentBuffer()
    for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False):
        buf.append(text[a:b])
        snap = buf.snapshot()  # never raises, whatever the cut
        assert snap is None or isinstance(snap, dict)
    assert buf.snapshot() == obj
    assert buf.parse() == obj == parse_arguments(text)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\{}[]: ,é'),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(alphabet='ab"\\{}'), inner, max_size=3),
                     max_leaves=8)


@given(_JSON, st.lists(st.integers(0, 60), max_size=6), st.sampled_from(["", " ", "x", "}"]))
def test_object_end_tells_a_closed_object_under_any_chunking(value: Any, cuts: list[int],
                                                            tail: str) -> None:
    """ObjectEnd (openai-chat's linear completeness check) agrees with a real parse."""
    from streamflow.core.partial_json import ObjectEnd

    text = json.dumps(value) + tail
    try:
        expected = isinstance(json.loads(text), dict)
    except ValueError:
        expected = False
    end, last = ObjectEnd(), 0
    for cut in sorted(c % (len(text) + 1) for c in cuts):
        end.feed(text[last:cut])
        last = cut
    end.feed(text[last:])
    if expected:
        assert end.closed
    elif isinstance(value, dict):
        assert not end.closed  # an object followed by garbage is not one closed object
