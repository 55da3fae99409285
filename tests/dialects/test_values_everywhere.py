"""Values are validated the same way in every dialect (issue 10, item 11).

Token counts must be non-negative integers: negative values, NaN, Infinity,
``1e999`` and strings are a ``ProtocolError`` in every dialect; ``NaN``/``Infinity``
in tool arguments are not JSON: ``ToolCallArgumentParseError``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from realdata import fault_bodies

from streamflow import StreamDecoder
from streamflow.core.errors import ProtocolError, ToolCallArgumentParseError
from streamflow.core.partial_json import parse_arguments
from streamflow.wire.dialects import get_dialect
from streamflow.wire.framing import make_framer
from streamflow.wire.framing.eventstream import encode_message

BODIES = fault_bodies()
COUNT_KEYS = {"input_tokens", "output_tokens", "prompt_tokens", "completion_tokens",
              "promptTokenCount", "candidatesTokenCount", "inputTokens", "outputTokens",
              "prompt_eval_count", "eval_count", "response_tokens"}
BAD = ["-4", "NaN", "Infinity", "1e999", '"7"', "1.5"]
MARK = "__BAD_VALUE__"


def _mark(obj: Any) -> bool:
    found = False
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in COUNT_KEYS and type(value) is int:
                obj[key] = MARK
                found = True
            else:
                found = _mark(value) or found
    elif isinstance(obj, list):
        for value in obj:
            found = _mark(value) or found
    return found


def with_bad_count(dialect: str, bad: str) -> bytes | None:
    """The dialect's body with every token count replaced by the raw JSON text ``bad``."""
    cls = get_dialect(dialect)
    framer = make_framer(cls.framing)
    body = BODIES.body_for(dialect)
    frames = framer.feed(body) + framer.close()
    out, hit = [], False
    for f in frames:
        raw = f.payload.decode() if cls.framing == "eventstream" else f.data
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if obj is not None and _mark(obj):
            hit = True
            raw = json.dumps(obj).replace(f'"{MARK}"', bad)
        if cls.framing == "eventstream":
            out.append(encode_message(dict(f.headers), raw.encode()))
        elif cls.framing == "ndjson":
            out.append(raw.encode() + b"\n")
        else:
            event = f"event: {f.event}\n" if f.event != "message" else ""
            out.append(f"{event}data: {raw}\n\n".encode())
    return b"".join(out) if hit else None


@pytest.mark.parametrize("dialect", BODIES.available())
@pytest.mark.parametrize("bad", BAD)
def test_a_token_count_that_is_not_a_non_negative_integer_is_a_protocol_error(
        dialect: str, bad: str) -> None:
    body = with_bad_count(dialect, bad)
    if body is None:
        pytest.skip(f"the {dialect} fault body has no token count")
    dec = StreamDecoder(dialect)
    with pytest.raises(ProtocolError) as info:
        dec.feed(body)
        dec.close()
    assert info.value.partial is not None and not info.value.partial.complete


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}'])
def test_nan_and_infinity_in_tool_arguments_are_not_json(text: str) -> None:
    with pytest.raises(ToolCallArgumentParseError):
        parse_arguments(text)
