"""Assembler and Message: the grammar enforced on UniEvents, the partial form, the JSON form."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import DATA

from streamflow import StreamDecoder
from streamflow.core.errors import ProtocolError
from streamflow.core.events import (
    InlineDataItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    event_from_dict,
)
from streamflow.core.message import Assembler, Message


def d(item: Any, at: int = 1, provider: dict[str, Any] | None = None) -> UniEvent:
    return UniEvent("delta", [item], None, None, at, provider)


STOP = UniEvent("stop", [], Usage(0, 10, None, 5), "stop", 9, {"stop_reason": "end_turn"})


def feed(*events: UniEvent) -> Assembler:
    a = Assembler()
    for e in events:
        a.feed(e)
    return a


def test_assembles_the_done_items_usage_and_finish_reason() -> None:
    a = feed(d(ThinkingItem("thinking.delta", "a"), 5, {"id": "m", "model": "x"}),
             d(ThinkingItem("thinking.done", "a", {"signature": "s"})),
             d(TextItem("text.delta", "Hi")), d(TextItem("text.done", "Hi")),
             d(ToolCallItem("tool_call.delta", "f", "c", "{}")),
             d(ToolCallItem("tool_call.done", "f", "c", {})), STOP)
    m = a.message
    assert a.stopped and m.complete
    assert (m.text, m.thinking, m.tool_calls) == ("Hi", "a", [ToolCallItem("tool_call.done", "f",
                                                                           "c", {})])
    assert (m.id, m.model, m.created_at) == ("m", "x", 5)
    assert m.usage_metadata == Usage(0, 10, None, 5) and m.finish_reason == "stop"
    assert m.provider == {"id": "m", "model": "x", "stop_reason": "end_turn"}


def test_partial_message_form() -> None:
    a = feed(d(TextItem("text.delta", "Hel")), d(TextItem("text.delta", "lo")))
    assert a.message.items == [TextItem("text.delta", "Hello")]
    a.feed(d(TextItem("text.done", "Hello")))
    a.feed(d(InlineDataItem("inline_data.delta", b"\x01", "audio/pcm")))
    a.feed(d(InlineDataItem("inline_data.delta", b"\x02", "audio/pcm")))
    m = a.message
    assert m.items == [TextItem("text.done", "Hello"),
                       InlineDataItem("inline_data.delta", b"\x01\x02", "audio/pcm")]
    assert not m.complete and m.usage_metadata is None and m.finish_reason is None
    assert Message().to_dict()["items"] == [] and not Message().complete


@pytest.mark.parametrize("events", [
    [STOP, d(TextItem("text.delta", "late"))],                                # after stop
    [STOP, STOP],                                                             # stop twice
    [d(TextItem("text.delta", "a")), d(ThinkingItem("thinking.delta", "b"))],  # interleaving
    [d(TextItem("text.delta", "a")), d(ThinkingItem("thinking.done", "b"))],  # done of another
    [d(TextItem("text.done", "a"))],                                          # done alone
    [d(TextItem("text.delta", "a")), STOP],                                   # stop, group open
    [UniEvent("delta", [], None, None, 1)],                                   # no item
    [UniEvent("delta", [TextItem(), TextItem()], None, None, 1)],              # two items
    [UniEvent("stop", [TextItem()], Usage(), "stop", 1)],                     # stop with items
], ids=["after-stop", "stop-twice", "interleave", "done-other-kind", "lone-done",
        "stop-open-group", "no-item", "two-items", "stop-with-items"])
def test_grammar_violations_are_protocol_errors(events: list[UniEvent]) -> None:
    a = Assembler()
    *head, last = events
    for e in head:
        a.feed(e)
    before = a.message.to_dict()
    with pytest.raises(ProtocolError):
        a.feed(last)
    assert a.message.to_dict() == before  # a rejected event changes nothing


def test_message_json_form_round_trips() -> None:
    body = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()
    dec = StreamDecoder(clock=lambda: 3)
    events = dec.feed(body) + dec.close()
    again = feed(*(event_from_dict(json.loads(json.dumps(e.to_dict()))) for e in events))
    assert again.message.to_dict() == dec.message.to_dict()
    assert json.loads(json.dumps(dec.message.to_dict()))["items"][1]["data"] == \
        "RW13S0FoZ0JFZ3kzdmEzcHppeC9MYWZQc240YQ=="
    assert set(dec.message.to_dict()) == {"id", "model", "role", "items", "usage_metadata",
                                          "finish_reason", "created_at", "complete", "provider"}


# -- any valid stream: the assembler agrees with its groups -----------------------------

GROUP = st.one_of(
    st.lists(st.text(max_size=4), min_size=1, max_size=4).map(lambda p: ("text", p)),
    st.lists(st.text(max_size=4), min_size=1, max_size=4).map(lambda p: ("thinking", p)),
    st.lists(st.binary(max_size=3), min_size=1, max_size=3).map(lambda p: ("inline_data", p)),
)


def group_events(kind: str, parts: list[Any]) -> tuple[list[UniEvent], Any, Any]:
    make = {"text": lambda t, v: TextItem(f"text.{t}", v),
            "thinking": lambda t, v: ThinkingItem(f"thinking.{t}", v),
            "inline_data": lambda t, v: InlineDataItem(f"inline_data.{t}", v, "audio/pcm")}[kind]
    joined = b"".join(parts) if kind == "inline_data" else "".join(parts)
    return [d(make("delta", p)) for p in parts], make("delta", joined), make("done", joined)


@settings(max_examples=200, deadline=None)
@given(st.lists(GROUP, max_size=6), st.booleans())
def test_partial_at_every_step_is_done_items_plus_open_group(groups: list[Any],
                                                             stop: bool) -> None:
    a = Assembler()
    done: list[Any] = []
    for kind, parts in groups:
        deltas, merged, finished = group_events(kind, parts)
        for i, e in enumerate(deltas):
            a.feed(e)
            _, partial, _ = group_events(kind, parts[: i + 1])
            assert a.message.items == [*done, partial]
        assert a.message.items == [*done, merged]
        a.feed(d(finished))
        done.append(finished)
        assert a.message.items == done
    if stop:
        a.feed(STOP)
    assert a.message.items == done and a.message.complete is stop


def test_tiny_fragments_are_packed_so_memory_follows_the_text_not_the_fragment_count() -> None:
    """200,000 one-character fragments: the open group holds blocks, not 200,000 strings,
    and the partial and final messages are exactly the text."""
    import tracemalloc

    from streamflow.core.message import PACK

    n = 200_000
    asm = Assembler()
    tracemalloc.start()
    try:
        for i in range(n):
            asm.feed(UniEvent("delta", [TextItem("text.delta", "ab"[i % 2])]))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(asm.fragments) <= n // PACK + PACK
    assert held < 8 * n  # one 1-char str alone is ~50 bytes
    assert asm.message.text == "ab" * (n // 2)
    asm.feed(UniEvent("delta", [TextItem("text.done", "ab" * (n // 2))]))
    asm.feed(UniEvent("stop", [], Usage(), "stop"))
    assert asm.message.text == "ab" * (n // 2) and asm.message.complete


@given(st.lists(st.text(max_size=3), min_size=1, max_size=300))
@settings(max_examples=60, deadline=None)
def test_packing_never_changes_the_partial_or_the_done_text(parts: list[str]) -> None:
    """Emitter path (append_fragment) and reader path (feed) keep the exact text in order."""
    from streamflow.wire.dialects._emitter import Emitter

    em = Emitter()
    reader = Assembler()
    so_far = ""
    for part in parts:
        em.text(part)
        so_far += part
        for event in em.drain():
            reader.feed(event)
        assert em.message.text == reader.message.text == so_far
    em.stop(Usage(), "stop")
    for event in em.drain():
        reader.feed(event)
    assert em.message.text == reader.message.text == "".join(parts)
