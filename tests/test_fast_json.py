"""The optional orjson payload parser reads exactly what ``pydantic_core.from_json`` reads.

orjson turns integers past 64 bits into floats and refuses ``NaN``/``Infinity`` and
nesting deeper than 1024; ``from_json`` keeps the integers exact, reads ``NaN``, and
refuses nesting past about 200. :func:`streamflow.wire.dialects.base.parse_payload` uses
orjson (compiled build, ``fast`` extra installed) only where the results are the same
and falls back to ``from_json`` otherwise; these tests hold on either build, with and
without orjson. The pure build's parser is orjson here too, to test the checks.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_core import from_json

import streamflow
from streamflow import ProtocolError, assemble
from streamflow.wire.dialects import base
from streamflow.wire.dialects.base import load_frame, load_json, parse_frame, parse_payload
from streamflow.wire.framing import ServerSentEvent, SSEParser

BIG = 2**64 + 1
AS_IMPORTED = base.FAST_JSON


@pytest.fixture(autouse=True)
def _orjson_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure build leaves orjson off (it would not pay there): turn it on to test it."""
    try:
        import orjson
    except ImportError:
        return
    if base.FAST_JSON is None:
        monkeypatch.setattr(base, "FAST_JSON", orjson.loads)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal JSON types (an int is not its float; NaN equals NaN)."""
    return json.dumps(a, allow_nan=True) == json.dumps(b, allow_nan=True)


scalars = (st.none() | st.booleans() | st.text(max_size=8)
           | st.integers(min_value=-(2**80), max_value=2**80)
           | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1])
           | st.floats(allow_nan=True, allow_infinity=True))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=20)


@given(values)
def test_any_payload_parses_as_from_json_parses_it(value: Any) -> None:
    text = json.dumps(value, allow_nan=True)
    assert same(parse_payload(text), from_json(text))


@given(values)
def test_an_sse_frame_parses_from_its_bytes_as_from_json_parses_its_text(value: Any) -> None:
    raw = json.dumps(value, allow_nan=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    (frame,) = SSEParser().feed(b"data: " + raw + b"\n\n")
    assert same(parse_frame(frame), from_json(frame.data))


@pytest.mark.parametrize("raw", [b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80 x"}', b'["\xe2\x82"]',
                                 b'{"a":"\xf0\x9f\x99\x82"}'])
def test_invalid_utf8_in_a_frame_reads_as_replacement_characters(raw: bytes) -> None:
    """orjson refuses invalid UTF-8 bytes; the frame's text (U+FFFD) is read instead."""
    frame = ServerSentEvent(raw=raw)
    assert parse_frame(frame) == from_json(raw.decode("utf-8", "replace"))


def test_a_malformed_frame_is_a_protocol_error_keeping_its_text() -> None:
    with pytest.raises(ProtocolError) as info:
        load_frame(ServerSentEvent(raw=b'{"a": \xff'), "test event")
    assert "malformed JSON in test event" in str(info.value)
    assert info.value.raw == '{"a": \ufffd'


@pytest.mark.parametrize("text", [
    f'{{"a": {BIG}}}', f"[{-BIG}]", '{"x": [1, {"y": 18446744073709551616}]}',
    '{"a": NaN}', "[Infinity, -Infinity]", "[1e400]", '{"d": -0.0}',
])
def test_the_cases_where_orjson_differs_fall_back(text: str) -> None:
    assert same(parse_payload(text), from_json(text))
    assert same(parse_frame(ServerSentEvent(raw=text.encode())), from_json(text))


@pytest.mark.parametrize("depth", [150, 199, 201, 250, 600, 1100])
def test_nesting_is_refused_exactly_where_from_json_refuses_it(depth: int) -> None:
    text = '{"a":' * depth + "1" + "}" * depth
    try:
        want: Any = from_json(text)
    except ValueError:
        with pytest.raises(ValueError):
            parse_payload(text)
        with pytest.raises(ProtocolError):
            load_json(text)
    else:
        assert same(parse_payload(text), want)


def test_a_stream_keeps_integers_past_64_bits_and_nan_exactly() -> None:
    body = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"x",'
        f'"role":"assistant","content":[],"usage":{{"input_tokens":1,"big":{BIG}}}}}}}\n\n'
        'data: {"type":"content_block_start","index":0,"content_block":{"type":"text",'
        '"text":""}}\n\n'
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
        '"text":"hi"}}\n\n'
        'data: {"type":"content_block_stop","index":0}\n\n'
        'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","x":NaN},'
        f'"usage":{{"output_tokens":2,"huge":{-BIG}}}}}\n\n'
        'data: {"type":"message_stop"}\n\n').encode()
    message = assemble(body, "anthropic")
    assert message.text == "hi"
    raw = message.usage_metadata.provider if message.usage_metadata else None
    assert raw is not None and raw["big"] == BIG and type(raw["big"]) is int
    assert raw["huge"] == -BIG and type(raw["huge"]) is int
    assert math.isnan(message.provider["x"])


def test_orjson_is_used_by_the_compiled_build_when_installed() -> None:
    orjson = pytest.importorskip("orjson")
    assert AS_IMPORTED is (orjson.loads if streamflow.compiled else None)
