"""The grammar table is the source: every (state, symbol) pair, through the reader
(:class:`~streamflow.core.message.Assembler`) and the writer (:class:`~streamflow.wire.dialects.
emitter.Emitter`), checked against ``grammar.TRANSITIONS`` and its error messages."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

import streamflow.core._grammar as grammar
from streamflow.core._budget import Budget
from streamflow.core._grammar import (
    DELTA,
    DONE,
    IDLE,
    OPEN,
    OTHER,
    OTHER_DONE,
    STOP,
    STOPPED,
    TRANSITIONS,
    WRITER_CLOSES,
    refusal,
    symbol,
)
from streamflow.core.errors import LimitExceededError, ProtocolError
from streamflow.core.events import TextItem, ThinkingItem, UniEvent, Usage
from streamflow.core.limits import Limits
from streamflow.core.message import Assembler
from streamflow.wire.dialects._emitter import Emitter

STATES = (IDLE, OPEN, STOPPED)
SYMBOLS = (DELTA, OTHER, DONE, OTHER_DONE, STOP)
PAIRS = list(itertools.product(STATES, SYMBOLS))
OPEN_KIND = "text"  # the kind of the group open in state OPEN


def delta(item: TextItem | ThinkingItem) -> UniEvent:
    return UniEvent("delta", [item])


def stop() -> UniEvent:
    return UniEvent("stop", [], Usage(), "stop")


def reader_in(state: str) -> Assembler:
    asm = Assembler()
    if state == OPEN:
        asm.feed(delta(TextItem("text.delta", "a")))
    elif state == STOPPED:
        asm.feed(stop())
    assert asm.state == state
    return asm


def event_for(state: str, sym: str) -> UniEvent | None:
    """An event that is ``sym`` in ``state`` (None: no event is, see the reachability test)."""
    open_kind = OPEN_KIND if state == OPEN else None
    candidates = [delta(TextItem("text.delta", "b")), delta(ThinkingItem("thinking.delta", "t")),
                  delta(TextItem("text.done", "ab")), delta(ThinkingItem("thinking.done", "t")),
                  stop()]
    for event in candidates:
        item = event.content_items[0] if event.content_items else None
        got = symbol(item.kind if item else None, bool(item and item.type.endswith(".done")),
                     open_kind)
        if got == sym:
            return event
    return None


def what_of(event: UniEvent) -> str:
    return event.content_items[0].type if event.content_items else "stop"


def expected_error(state: str, sym: str, what: str, kind: str) -> str:
    return str(refusal(state, sym, what=what, kind=kind,
                       open_kind=OPEN_KIND if state == OPEN else None))


def test_symbols_other_than_the_open_groups_exist_only_while_a_group_is_open() -> None:
    for kind, done in itertools.product(("text", "thinking", None), (False, True)):
        assert symbol(kind, done, None) in (DELTA, DONE, STOP)
    unreachable = {(s, y) for s in (IDLE, STOPPED) for y in (OTHER, OTHER_DONE)}
    assert not unreachable & set(TRANSITIONS)
    assert {p for p in PAIRS if event_for(*p) is None} == unreachable


@pytest.mark.parametrize(("state", "sym"), PAIRS)
def test_the_reader_follows_the_table(state: str, sym: str) -> None:
    event = event_for(state, sym)
    if event is None:
        return  # no event is this symbol here (previous test)
    asm = reader_in(state)
    before = asm.message
    if (state, sym) in TRANSITIONS:
        asm.feed(event)
        assert asm.state == TRANSITIONS[(state, sym)]
        return
    item = event.content_items[0] if event.content_items else None
    with pytest.raises(ProtocolError) as caught:
        asm.feed(event)
    assert str(caught.value) == expected_error(state, sym, what_of(event),
                                               item.kind if item else "")
    assert asm.state == state and asm.message == before  # a rejected event changes nothing


def writer_in(state: str) -> Emitter:
    em = Emitter()
    if state == OPEN:
        em.text("a")
    elif state == STOPPED:
        em.stop(Usage(), "stop")
    em.drain()
    assert em.assembler.state == state
    return em


WRITES: dict[str, Callable[[Emitter], None]] = {
    DELTA: lambda em: em.text("b"),
    OTHER: lambda em: em.thinking("t"),
    DONE: lambda em: em.close_group(),
    STOP: lambda em: em.stop(Usage(), "stop"),
}


@pytest.mark.parametrize(("state", "sym"), PAIRS)
def test_the_writer_follows_the_table(state: str, sym: str) -> None:
    if sym == OTHER_DONE:  # the writer only ever closes the open group: never this symbol
        em = writer_in(state)
        em.close_group()
        for event in em.drain():
            assert symbol(event.item.kind, True, OPEN_KIND) == DONE  # type: ignore[union-attr]
        return
    if event_for(state, sym) is None:
        return
    em = writer_in(state)
    pair = (state, sym)
    nothing_open = sym == DONE and state != OPEN
    if pair in TRANSITIONS or pair in WRITER_CLOSES or nothing_open:
        WRITES[sym](em)
        written = em.drain()
        if pair in WRITER_CLOSES:  # closed the open group first, then took the symbol
            assert written[0].item is not None and written[0].item.type == "text.done"
            assert em.assembler.state == TRANSITIONS[(IDLE, DELTA if sym == OTHER else sym)]
        elif nothing_open:  # the writer never writes a .done with no group open
            assert written == []
            assert em.assembler.state == state
        else:
            assert em.assembler.state == TRANSITIONS[pair]
        # what the writer wrote, a reader in the same state accepts
        reader = reader_in(state)
        for event in written:
            reader.feed(event)
        assert reader.state == em.assembler.state
        return
    what = {DELTA: "text.delta", OTHER: "thinking.delta", STOP: "stop"}[sym]
    kind = {DELTA: "text", OTHER: "thinking", STOP: ""}[sym]
    before = em.message
    with pytest.raises(ProtocolError) as caught:
        WRITES[sym](em)
    assert str(caught.value) == expected_error(state, sym, what, kind)
    assert em.drain() == [] and em.message == before


def test_the_table_is_the_seed_grammar() -> None:
    """``(K.delta+ K.done)* stop``: the whole table, no more."""
    assert TRANSITIONS == {(IDLE, DELTA): OPEN, (IDLE, STOP): STOPPED,
                           (OPEN, DELTA): OPEN, (OPEN, DONE): IDLE}
    assert grammar.GROWS in TRANSITIONS and TRANSITIONS[grammar.GROWS] == OPEN
    for closing in WRITER_CLOSES:  # a writer closes only an open group, into a legal pair
        assert closing[0] == OPEN and (OPEN, DONE) in TRANSITIONS


def test_event_shape_messages_come_from_the_grammar() -> None:
    asm = Assembler()
    with pytest.raises(ProtocolError) as caught:
        asm.feed(UniEvent("delta", []))
    assert str(caught.value) == str(grammar.items_refusal("delta", 0))
    with pytest.raises(ProtocolError) as caught:
        asm.feed(UniEvent("stop", [TextItem("text.delta", "x")], Usage(), "stop"))
    assert str(caught.value) == str(grammar.items_refusal("stop", 1))


def test_budget_refuses_before_counting() -> None:
    budget = Budget(Limits(max_message_bytes=10, max_tool_arguments_bytes=4, max_groups=1))
    budget.open_group()
    budget.grow(4, tool=True)
    with pytest.raises(LimitExceededError) as caught:
        budget.grow(1, tool=True)
    assert caught.value.limit == "max_tool_arguments_bytes"  # type: ignore[attr-defined]
    assert (budget.size, budget.group_size) == (4, 4)
    with pytest.raises(LimitExceededError):
        budget.grow(7, tool=False)
    with pytest.raises(LimitExceededError):
        budget.open_group()
    assert budget.groups == 1


def test_the_writer_checks_the_budget_on_every_fragment() -> None:
    em = Emitter(Limits(max_message_bytes=5))
    em.text("abc")
    em.text("de")
    with pytest.raises(LimitExceededError):
        em.text("f")
    assert em.message.text == "abcde"
