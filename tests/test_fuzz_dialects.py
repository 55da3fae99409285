"""Fuzzing every registered dialect: the only exceptions that may come out are streamflow's.

Random bytes, random valid-but-hostile JSON (wrong types, huge and infinite numbers,
deep nesting, unknown event types, missing fields) framed the dialect's way,
mutations of real-shaped bodies, and random chunkings. Each run must end in a
message or a typed :class:`~streamflow.core.errors.StreamflowError` carrying a partial
message -- never a bare ``KeyError``/``ValueError``/``ValidationError``/``RecursionError``
-- and the chunking must never change the outcome. (The heavier, coverage-guided
harness is ``fuzz/``, run by hand with atheris.)
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamflow import StreamDecoder, StreamflowError
from streamflow.core.events import item_to_dict
from streamflow.wire.dialects import dialect_names, get_dialect
from streamflow.wire.framing.eventstream import EventStreamParser, encode_message


def _importable() -> list[str]:
    out = []
    for name in dialect_names():
        try:
            get_dialect(name)
        except ImportError:
            continue  # a dialect still being written
        out.append(name)
    return out


def _load_bodies() -> Any:
    path = Path(__file__).parent / "faults" / "fault_bodies.py"
    spec = importlib.util.spec_from_file_location("_fuzz_fault_bodies", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DIALECTS = _importable()
BODIES = _load_bodies()
SAMPLED = [d for d in BODIES.available() if d in DIALECTS]
FUZZ = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

KEYS = ["type", "index", "delta", "content_block", "message", "choices", "candidates", "usage",
        "error", "text", "thinking", "partial_json", "tool_calls", "function", "arguments",
        "name", "id", "output_index", "content_index", "item", "item_id", "response", "done",
        "finish_reason", "stop_reason", "role", "content", "parts", "event_type",
        "content_items", "usage_metadata", "data", "b64_json", "citation", "annotations",
        "url", "signature", "contentBlockIndex", "metadata", "embedding", "sequence_number"]
TYPES = ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
         "message_delta", "message_stop", "ping", "error", "text_delta", "input_json_delta",
         "thinking_delta", "signature_delta", "citations_delta", "tool_use", "text", "thinking",
         "response.created", "response.output_item.added", "response.output_text.delta",
         "response.completed", "response.failed", "image_generation.completed", "delta", "stop",
         "text.delta", "text.done", "tool_call.delta", "tool_call.done", "function_call",
         "messageStart", "contentBlockDelta", "messageStop", "metadata", "unknown_future_type"]
HOSTILE = ["1e999", "-1e999", "1" * 400, "-0", "1.5e-400", "[" * 300 + "]" * 300,
           '"\\ud800"', '"\\u0000"', "{" + '"a":{' * 150 + "}" * 151, "null", "[]", "{}",
           '"javascript:alert(1)"']

scalars = (st.none() | st.booleans() | st.integers(-(10**30), 10**30)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
           | st.sampled_from(TYPES) | st.just("__HOSTILE__"))
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4)
                      | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), kids,
                                        max_size=4), max_leaves=10)
events = st.builds(lambda kind, rest: {"type": kind, **rest}, st.sampled_from(TYPES) | scalars,
                   st.dictionaries(st.sampled_from(KEYS[1:]), values, max_size=4))


def outcome(dialect: str, chunks: list[bytes]) -> tuple[Any, ...]:
    """("ok", items) or ("error", type, partial items); any other exception escapes."""
    decoder = StreamDecoder(dialect)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
        decoder.close()
    except StreamflowError as exc:
        assert exc.partial is not None, "a typed error without its partial message"
        return ("error", type(exc).__name__, [item_to_dict(i) for i in exc.partial.items])
    return ("ok", [item_to_dict(i) for i in decoder.message.items])


def rechunk(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, last = [], 0
    for p in points:
        out.append(data[last:p])
        last = p
    return [*out, data[last:]]


def frame(dialect: str, payloads: list[str], kinds: list[str]) -> bytes:
    """Payloads framed the dialect's way (``kinds`` give SSE event lines / AWS event types)."""
    framing = get_dialect(dialect).framing if dialect != "auto" else "sse"
    out = []
    for text, kind in zip(payloads, kinds, strict=True):
        if framing == "sse":
            head = f"event: {kind}\n" if kind else ""
            out.append(f"{head}data: {text}\n\n".encode("utf-8", "surrogatepass"))
        elif framing == "eventstream":
            message_type = "exception" if kind == "error" else "event"
            out.append(encode_message({":event-type": kind or "x", ":message-type": message_type,
                                       ":content-type": "application/json",
                                       ":exception-type": kind or "x"},
                                      text.encode("utf-8", "surrogatepass")))
        else:
            out.append(text.encode("utf-8", "surrogatepass") + b"\n")
    return b"".join(out)


def hostile_text(obj: Any, literal: str) -> str:
    return json.dumps(obj).replace('"__HOSTILE__"', literal)


@FUZZ
@given(data=st.binary(max_size=600), cuts=st.lists(st.integers(0, 600), max_size=6))
def test_random_bytes_give_only_typed_errors(data: bytes, cuts: list[int]) -> None:
    for dialect in ["auto", *DIALECTS]:
        assert outcome(dialect, rechunk(data, cuts)) == outcome(dialect, [data]), dialect


@FUZZ
@given(objs=st.lists(events, min_size=1, max_size=6),
       kinds=st.lists(st.sampled_from(TYPES) | st.just(""), min_size=6, max_size=6),
       literal=st.sampled_from(HOSTILE), cuts=st.lists(st.integers(0, 4000), max_size=5))
def test_hostile_json_events_give_only_typed_errors(objs: list[Any], kinds: list[str],
                                                   literal: str, cuts: list[int]) -> None:
    payloads = [hostile_text(o, literal) for o in objs]
    for dialect in DIALECTS:  # the same hostile events, framed for every dialect
        body = frame(dialect, payloads, kinds[:len(objs)])
        assert outcome(dialect, rechunk(body, cuts)) == outcome(dialect, [body]), dialect


def _payloads(dialect: str, body: bytes) -> tuple[list[str], list[str]]:
    """The JSON payloads of a sample body and their SSE event / AWS event types."""
    framing = get_dialect(dialect).framing
    if framing == "eventstream":
        messages = EventStreamParser().feed(body)
        return [m.payload.decode() for m in messages], [str(m.event_type) for m in messages]
    if framing == "ndjson":
        return [line for line in body.decode().splitlines() if line], \
            [""] * len(body.splitlines())
    blocks = [b for b in body.decode().split("\n\n") if b.strip()]
    data = [next(line[6:] for line in b.splitlines() if line.startswith("data: ")) for b in blocks]
    kinds = [next((line[7:] for line in b.splitlines() if line.startswith("event: ")), "")
             for b in blocks]
    return data, kinds


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _paths(child, (*path, i))
    return out


def mutate(obj: Any, data: st.DataObject) -> Any:
    """One hostile edit of a real-shaped event: retype, delete, or replace a field."""
    paths = _paths(obj)
    path = data.draw(st.sampled_from(paths[1:] or paths))
    if not path:
        return data.draw(values)
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    action = data.draw(st.sampled_from(["replace", "delete", "hostile", "unknown_type"]))
    if action == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "unknown_type" and isinstance(parent, dict):
        parent["type"] = data.draw(st.text(max_size=8) | st.sampled_from(TYPES))
    elif action == "hostile":
        parent[path[-1]] = "__HOSTILE__"
    else:
        parent[path[-1]] = data.draw(values)
    return obj


@pytest.mark.parametrize("dialect", SAMPLED)
@FUZZ
@given(data=st.data(), literal=st.sampled_from(HOSTILE),
       cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_mutated_real_shaped_streams_give_only_typed_errors(dialect: str, data: st.DataObject,
                                                           literal: str,
                                                           cuts: list[int]) -> None:
    payloads, kinds = _payloads(dialect, BODIES.body_for(dialect))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(payloads) - 1))
        if payloads[i].startswith("{"):  # not data: [DONE]
            payloads[i] = hostile_text(mutate(json.loads(payloads[i]), data), literal)
    if data.draw(st.booleans()):  # and maybe a missing or repeated event
        j = data.draw(st.integers(0, len(payloads) - 1))
        if data.draw(st.booleans()):
            del payloads[j], kinds[j]
        else:
            payloads.insert(j, payloads[j])
            kinds.insert(j, kinds[j])
    body = frame(dialect, payloads, kinds)
    assert outcome(dialect, rechunk(body, cuts)) == outcome(dialect, [body])


@pytest.mark.parametrize("dialect", SAMPLED)
@FUZZ
@given(cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_any_chunking_of_a_valid_body_gives_the_same_message(dialect: str,
                                                             cuts: list[int]) -> None:
    body = BODIES.body_for(dialect)
    whole = outcome(dialect, [body])
    assert whole[0] == "ok"
    assert outcome(dialect, rechunk(body, cuts)) == whole


@pytest.mark.skipif("uni" not in DIALECTS, reason="the uni dialect is not registered")
def test_an_infinite_number_where_an_integer_belongs_is_a_protocol_error() -> None:
    body = BODIES.body_for("uni").replace(b'"created_at":1', b'"created_at":1e999', 1)
    assert b"1e999" in body
    result = outcome("uni", [body])
    assert result[:2] == ("error", "ProtocolError")
