"""Blocks that overlap on the wire give the message of the same blocks one after another.

Wire formats that number their blocks may interleave them: llama.cpp's
``/v1/messages`` starts each parallel ``tool_use`` block before the previous one
stops and stops them all at the end (issue 26). UniEvent groups never interleave,
so a decoder must keep the blocks apart by index. For the Anthropic and the OpenAI
Responses dialects (``index`` / ``output_index``) and Bedrock ConverseStream
(``contentBlockIndex``): any interleaving of the blocks of a valid stream -- each
block's own events in their order, blocks starting in index order as the official
SDKs require (they append a block at its start and address it by index) -- decodes
to the very message the non-interleaved stream gives, and the official SDK of the
dialect reads the same content from both. Gemini parts carry no index (each chunk's
parts are whole and in order; candidates, which are numbered, are already kept
apart), so nothing can overlap there.

``tests/data/anthropic/llamacpp_parallel_tools_overlap.sse`` is a llama.cpp-shaped
body (``to_json_anthropic_stream``: ``tool_use`` starts without ``input``, every
block stopped at the end) whose two calls' ``input_json_delta`` fragments interleave.
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
from streamflow.wire.framing import make_framer
from streamflow.wire.framing.eventstream import encode_message

DATA = Path(__file__).resolve().parent.parent / "data"
LLAMA = DATA / "anthropic" / "llamacpp_parallel_tools_overlap.sse"
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                          HealthCheck.data_too_large])


def _sdks() -> Any:
    path = Path(__file__).resolve().parent.parent / "encoders" / "sdks.py"
    spec = importlib.util.spec_from_file_location("_overlap_sdks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sse(events: list[tuple[str, Any]]) -> bytes:
    return b"".join(f"event: {kind}\ndata: {json.dumps(doc, ensure_ascii=False)}\n\n".encode()
                    for kind, doc in events)


def events_of(body: bytes) -> list[tuple[str, Any]]:
    frames = make_framer("sse").feed(body)
    return [(f.event, json.loads(f.data)) for f in frames]


def message(dialect: str, body: bytes) -> dict[str, Any]:
    """What a user reads: the items, usage, finish reason and provider data."""
    dec = StreamDecoder(dialect, clock=lambda: 7)
    dec.feed(body)
    dec.close()
    msg = dec.message
    return {"items": [item_to_dict(i) for i in msg.items], "finish": msg.finish_reason,
            "usage": msg.usage_metadata, "provider": msg.provider}


# -- splitting a stream into blocks, and interleaving them ------------------------
def split(events: list[Any], index_of: Any) -> tuple[list[Any], list[list[Any]], list[Any]]:
    """``(head, blocks in index order, tail)``; ``None`` when events outside the blocks
    come between them (then the body is not a plain sequence of blocks)."""
    head: list[Any] = []
    tail: list[Any] = []
    blocks: dict[int, list[Any]] = {}
    for event in events:
        index = index_of(event)
        if index is None:
            (tail if blocks else head).append(event)
        elif tail:
            return None  # type: ignore[return-value]
        else:
            blocks.setdefault(index, []).append(event)
    return head, [blocks[i] for i in sorted(blocks)], tail


def interleave(blocks: list[list[Any]], data: st.DataObject) -> list[Any]:
    """One interleaving: each block's events in order, block k starting after block k-1."""
    at = [0] * len(blocks)
    out: list[Any] = []
    while any(at[k] < len(b) for k, b in enumerate(blocks)):
        ready = [k for k, b in enumerate(blocks)
                 if at[k] < len(b) and (k == 0 or at[k - 1] > 0 or at[k] > 0)]
        k = data.draw(st.sampled_from(ready))
        out.append(blocks[k][at[k]])
        at[k] += 1
    return out


def _anthropic_index(event: tuple[str, Any]) -> int | None:
    doc = event[1]
    if doc.get("type") in ("content_block_start", "content_block_delta", "content_block_stop"):
        return int(doc["index"])
    return None


def _responses_index(event: tuple[str, Any]) -> int | None:
    index = event[1].get("output_index")
    return index if type(index) is int else None


def _bedrock_index(event: tuple[str, Any]) -> int | None:
    index = event[1].get("contentBlockIndex")
    return index if type(index) is int else None


def _aws(events: list[tuple[str, Any]]) -> bytes:
    return b"".join(encode_message({":event-type": kind, ":content-type": "application/json",
                                    ":message-type": "event"}, json.dumps(doc).encode())
                    for kind, doc in events)


def _bodies(folder: str, suffix: str = ".sse") -> list[Path]:
    return sorted((DATA / folder).glob(f"*{suffix}"))


def _decodes(dialect: str, body: bytes) -> bool:
    try:
        message(dialect, body)
    except StreamflowError:
        return False
    return True


def _cases(dialect: str, paths: list[Path], index_of: Any) -> list[Any]:
    out = []
    for path in paths:
        try:
            events = events_of(path.read_bytes())
        except ValueError:
            continue  # another dialect's body (data: [DONE])
        parts = split(events, index_of)
        if parts is not None and len(parts[1]) > 1 and _decodes(dialect, sse(events)):
            out.append(pytest.param(parts, id=path.name))
    return out


ANTHROPIC = _cases("anthropic", _bodies("anthropic") + _bodies("cli") + _bodies("sinks"),
                   _anthropic_index)
RESPONSES = _cases("openai-responses", _bodies("openai_responses") + _bodies("gateway"),
                   _responses_index)
CONVERSE = [
    pytest.param(split([(k, d) for k, d in json.loads(p.read_text())], _bedrock_index),
                 id=p.name) for p in [DATA / "bedrock" / "converse_thinking_tools.json"]]


def _sequential(parts: Any) -> list[Any]:
    head, blocks, tail = parts
    return head + [e for b in blocks for e in b] + tail


# -- the llama.cpp body -----------------------------------------------------------
def test_the_llamacpp_overlapping_tool_calls_are_both_read() -> None:
    got = message("anthropic", LLAMA.read_bytes())
    kinds = [i["type"] for i in got["items"]]
    assert kinds.count("tool_call.done") == 2 and kinds.count("text.done") == 1
    calls = [(i["name"], i["tool_call_id"], i["arguments"]) for i in got["items"]
             if i["type"] == "tool_call.done"]
    assert calls == [("get_weather", "call_Zr0Hq8cYbV2mJx4Tn6Lw1Ks9",
                      {"city": "Paris", "unit": "celsius"}),
                     ("get_weather", "call_Pd5Wn2gEoF7sQa9Uy3Rj8Hc4",
                      {"city": "Berlin", "unit": "celsius"})]
    assert got["finish"] == "tool_call"
    # the groups follow one another: each .done before the next group's first delta
    dec = StreamDecoder("anthropic", clock=lambda: 7)
    events = dec.feed(LLAMA.read_bytes()) + dec.close()
    open_kind = None
    for event in events[:-1]:
        item = event.content_items[0]
        kind, phase = item.type.split(".")
        assert open_kind in (None, kind), f"{item.type} while a {open_kind} group is open"
        open_kind = None if phase == "done" else kind


def test_the_llamacpp_body_reads_as_the_anthropic_sdk_reads_it() -> None:
    sdks = _sdks()
    body = LLAMA.read_bytes()
    official = sdks.anthropic_reads(body)
    got = message("anthropic", body)
    text = "".join(i["text"] for i in got["items"] if i["type"] == "text.done")
    calls = [(i["name"], i["tool_call_id"], i["arguments"]) for i in got["items"]
             if i["type"] == "tool_call.done"]
    assert (text, calls, got["finish"]) == (official["text"], official["calls"],
                                            official["finish"])
    assert len(official["calls"]) == 2


def test_a_partial_message_keeps_the_fragments_of_held_blocks() -> None:
    events = events_of(LLAMA.read_bytes())
    cut = next(n for n, (_, d) in enumerate(events) if d["type"] == "content_block_stop")
    dec = StreamDecoder("anthropic")
    dec.feed(sse(events[:cut]))
    with pytest.raises(StreamflowError) as info:
        dec.close()
    partial = info.value.partial
    assert partial is not None
    args = [i.arguments for i in partial.items if i.kind == "tool_call"]
    assert args == ['{"city":"Paris","unit":"celsius"}', '{"city":"Berlin","unit":"celsius"}']


def test_overlap_costs_nothing_when_blocks_do_not_overlap() -> None:
    """The common path: no block is ever held (the held queue stays empty)."""
    from streamflow.wire.dialects.anthropic.decode import AnthropicDecoder

    body = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()
    dec = AnthropicDecoder()
    for frame in make_framer("sse").feed(body):
        dec.feed(frame)
        assert not dec._blocks._held


# -- the properties ---------------------------------------------------------------
@pytest.mark.parametrize("parts", [*ANTHROPIC, pytest.param(
    split(events_of(LLAMA.read_bytes()), _anthropic_index), id="llamacpp")])
@PROPERTY
@given(data=st.data())
def test_any_interleaving_of_anthropic_blocks_gives_the_same_message(parts: Any,
                                                                     data: st.DataObject) -> None:
    head, blocks, tail = parts
    baseline = sse(_sequential(parts))
    mixed = sse(head + interleave(blocks, data) + tail)
    assert message("anthropic", mixed) == message("anthropic", baseline)


@pytest.mark.parametrize("parts", [*ANTHROPIC[:3], pytest.param(
    split(events_of(LLAMA.read_bytes()), _anthropic_index), id="llamacpp")])
@settings(PROPERTY, max_examples=10)
@given(data=st.data())
def test_the_anthropic_sdk_reads_any_interleaving_the_same(parts: Any,
                                                           data: st.DataObject) -> None:
    sdks = _sdks()
    head, blocks, tail = parts
    mixed = sse(head + interleave(blocks, data) + tail)
    assert sdks.anthropic_reads(mixed) == sdks.anthropic_reads(sse(_sequential(parts)))


@pytest.mark.parametrize("parts", RESPONSES)
@PROPERTY
@given(data=st.data())
def test_any_interleaving_of_responses_items_gives_the_same_message(parts: Any,
                                                                    data: st.DataObject) -> None:
    head, blocks, tail = parts
    baseline = sse(_sequential(parts))
    mixed = sse(head + interleave(blocks, data) + tail)
    assert message("openai-responses", mixed) == message("openai-responses", baseline)


@pytest.mark.parametrize("parts", RESPONSES[:3])
@settings(PROPERTY, max_examples=10)
@given(data=st.data())
def test_the_openai_sdk_reads_any_interleaving_of_responses_items_the_same(
        parts: Any, data: st.DataObject) -> None:
    sdks = _sdks()
    head, blocks, tail = parts
    mixed = sse(head + interleave(blocks, data) + tail)
    assert sdks.responses_reads(mixed) == sdks.responses_reads(sse(_sequential(parts)))


@pytest.mark.parametrize("parts", CONVERSE)
@PROPERTY
@given(data=st.data())
def test_any_interleaving_of_bedrock_blocks_gives_the_same_message(parts: Any,
                                                                   data: st.DataObject) -> None:
    head, blocks, tail = parts
    mixed = _aws(head + interleave(blocks, data) + tail)
    assert message("bedrock", mixed) == message("bedrock", _aws(_sequential(parts)))


def test_there_are_streams_with_several_blocks_to_interleave() -> None:
    assert len(ANTHROPIC) >= 3 and len(RESPONSES) >= 2 and CONVERSE


def _held_flood(dialect: str) -> bytes:
    """Block 0 stays open while block 1 streams 40 fragments of 10 bytes (all held)."""
    if dialect == "anthropic":
        head = [("message_start", {"type": "message_start", "message": {
                    "id": "m", "model": "x", "usage": {"input_tokens": 1}}}),
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_start", {"type": "content_block_start", "index": 1,
                                         "content_block": {"type": "text", "text": ""}})]
        flood = [("content_block_delta", {"type": "content_block_delta", "index": 1,
                                          "delta": {"type": "text_delta", "text": "x" * 10}})]
    else:
        head = [("response.output_item.added", {
                    "type": "response.output_item.added", "output_index": i,
                    "item": {"type": "message", "id": f"m{i}", "content": []}}) for i in (0, 1)]
        flood = [("response.output_text.delta", {
            "type": "response.output_text.delta", "output_index": 1, "item_id": "m1",
            "content_index": 0, "delta": "x" * 10})]
    return sse(head + flood * 40)


@pytest.mark.parametrize("dialect", ["anthropic", "openai-responses"])
def test_held_fragments_count_against_the_message_limit(dialect: str) -> None:
    from streamflow.core.errors import LimitExceededError
    from streamflow.core.limits import Limits

    dec = StreamDecoder(dialect, limits=Limits(max_message_bytes=200))
    with pytest.raises(LimitExceededError) as info:
        dec.feed(_held_flood(dialect))
    assert info.value.partial is not None
