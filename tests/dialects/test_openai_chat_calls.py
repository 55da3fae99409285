"""De-interleaving of OpenAI ``tool_calls`` fragments
(streamflow.wire.dialects.openai_chat._calls)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow.core.errors import ProtocolError
from streamflow.core.events import ToolCallItem
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects.base import Emitter
from streamflow.wire.dialects.openai_chat._calls import ToolCalls


def frag(index: int, args: str = "", call_id: str = "", name: str = "") -> dict[str, Any]:
    fn: dict[str, Any] = {"arguments": args}
    if name:
        fn["name"] = name
    out: dict[str, Any] = {"index": index, "function": fn}
    if call_id:
        out.update(id=call_id, type="function")
    return out


def run(*fragments: dict[str, Any], settle: bool = True) -> list[ToolCallItem]:
    """Feed fragments to a fresh ToolCalls; the items emitted, in order."""
    em = Emitter()
    calls = ToolCalls(em, lambda: None)
    for f in fragments:
        calls.fragment(f, 0)
    if settle:
        calls.settle()
    return [e.content_items[0] for e in em.drain()]  # type: ignore[misc]


def brief(items: list[ToolCallItem]) -> list[tuple[str, str, Any]]:
    return [(i.type.split(".")[1], i.tool_call_id, i.arguments) for i in items]


def test_next_call_closes_a_complete_live_call_at_once() -> None:
    items = run(frag(0, "", "a", "f"), frag(0, "{\"x\":1}"), frag(1, "", "b", "g"),
                frag(1, "{}"), settle=False)
    assert brief(items) == [("delta", "a", ""), ("delta", "", "{\"x\":1}"),
                            ("done", "a", {"x": 1}),   # closed when call 1 first appeared
                            ("delta", "b", ""), ("delta", "", "{}")]  # call 1 is live


def test_incomplete_live_call_keeps_others_buffered_until_settle() -> None:
    items = run(frag(0, "{\"x\":", "a", "f"), frag(1, "{}", "b", "g"), settle=False)
    assert brief(items) == [("delta", "a", "{\"x\":")]
    items = run(frag(0, "{\"x\":", "a", "f"), frag(1, "{}", "b", "g"), frag(0, "2}"))
    assert brief(items) == [("delta", "a", "{\"x\":"), ("delta", "", "2}"), ("done", "a", {"x": 2}),
                            ("delta", "b", "{}"), ("done", "b", {})]


def test_complete_buffered_calls_are_released_in_a_chain() -> None:
    items = run(frag(0, "{\"x\":", "a", "f"), frag(1, "{}", "b", "g"), frag(2, "{}", "c", "h"),
                frag(0, "1}"), frag(3, "", "d", "k"), settle=False)
    assert brief(items)[-6:] == [("done", "a", {"x": 1}), ("delta", "b", "{}"), ("done", "b", {}),
                                 ("delta", "c", "{}"), ("done", "c", {}), ("delta", "d", "")]


def test_empty_fragments_are_ignored_and_empty_arguments_give_an_object() -> None:
    items = run(frag(0, "", "a", "f"), frag(5), frag(0, ""), frag(0, "  "))
    assert brief(items) == [("delta", "a", ""), ("delta", "", "  "), ("done", "a", {})]


def test_whitespace_for_a_closed_call_is_ignored_anything_else_is_not() -> None:
    em = Emitter()
    calls = ToolCalls(em, lambda: None)
    for f in (frag(0, "{}", "a", "f"), frag(1, "{}", "b", "g"), frag(0, "\n")):
        calls.fragment(f, 0)
    with pytest.raises(ProtocolError, match="closed"):
        calls.fragment(frag(0, "}"), 0)


def test_a_name_change_mid_call_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="name changed"):
        run(frag(0, "", "a", "f"), frag(0, "{}", "", "g"))
    same = run(frag(0, "", "a", "f"), frag(0, "{}", "a", "f"))  # repeated name/id: fine
    assert brief(same)[-1] == ("done", "a", {})


def test_missing_index_falls_back_to_the_position_in_the_array() -> None:
    em = Emitter()
    calls = ToolCalls(em, lambda: None)
    for position, f in enumerate([{"id": "a", "function": {"name": "f", "arguments": "{}"}},
                                  {"id": "b", "function": {"name": "g", "arguments": "{}"}}]):
        calls.fragment(f, position)
    calls.settle()
    assert [i.tool_call_id for i in em.message.tool_calls] == ["a", "b"]


# -- property: any interleaving gives the same calls --------------------------------
ARGS = st.dictionaries(st.sampled_from(["a", "city", "q", "n"]),
                       st.one_of(st.integers(-5, 99), st.text("xyz é\"", max_size=6),
                                 st.lists(st.booleans(), max_size=2)), max_size=3)


@st.composite
def interleaved_calls(draw: st.DrawFn, ordered_starts: bool) -> tuple[list[Any], list[Any]]:
    """2-3 calls, each split into fragments, merged in a random order (per-call order kept)."""
    count = draw(st.integers(2, 3))
    calls, queues = [], []
    for index in range(count):
        text = json.dumps(draw(ARGS), separators=(",", ":"), ensure_ascii=False)
        cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=4))))
        parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        head_args = draw(st.sampled_from(["", parts[0]]))
        tail = parts[1:] if head_args else parts
        call_id, name = f"call_{index}", f"tool_{index}"
        calls.append((call_id, name, json.loads(text)))
        queues.append([frag(index, head_args, call_id, name)] + [frag(index, p) for p in tail])
    order = []
    started = 0
    while any(queues):
        ready = [i for i, q in enumerate(queues) if q and (not ordered_starts or i <= started)]
        pick = draw(st.sampled_from(ready))
        order.append(queues[pick].pop(0))
        if pick == started:
            started += 1
    return calls, order


def chunked(fragments: list[Any], sizes: list[int]) -> bytes:
    """Fragments packed 1-2 per chunk, then finish, then [DONE]."""
    body, i = [], 0
    for size in [*sizes, len(fragments)]:
        if i >= len(fragments):
            break
        group = fragments[i:i + max(1, size)]
        i += len(group)
        body.append({"choices": [{"index": 0, "delta": {"tool_calls": group}}]})
    body.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in body) + b"data: [DONE]\n\n"


def decode_calls(body: bytes) -> list[tuple[str, str, Any]]:
    dec = StreamDecoder("openai-chat")
    dec.feed(body)
    dec.close()
    return [(c.tool_call_id, c.name, c.arguments) for c in dec.message.tool_calls]


@settings(max_examples=150, deadline=None)
@given(case=interleaved_calls(ordered_starts=True), sizes=st.lists(st.integers(1, 2)))
def test_interleavings_give_the_calls_in_index_order(case: Any, sizes: list[int]) -> None:
    calls, fragments = case
    assert decode_calls(chunked(fragments, sizes)) == calls


@settings(max_examples=100, deadline=None)
@given(case=interleaved_calls(ordered_starts=False), sizes=st.lists(st.integers(1, 2)))
def test_any_start_order_gives_every_call_once_first_seen_first(case: Any,
                                                                sizes: list[int]) -> None:
    calls, fragments = case
    got = decode_calls(chunked(fragments, sizes))
    assert sorted(got, key=repr) == sorted(calls, key=repr)
    assert got[0][0] == fragments[0]["id"]  # the first call seen streamed live, first
