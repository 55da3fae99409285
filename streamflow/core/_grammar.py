"""The UniEvent grammar, written once: states, symbols and one transition table.

A stream is ``(K.delta+ K.done)* stop``: groups of one kind that never interleave,
then exactly one ``stop``. Like h11's ``_state.py`` this module holds the table and
every error message about it (:func:`refusal`, :func:`items_refusal`); the
:class:`~streamflow.core.message.Assembler` (a reader: it rejects what breaks the table),
the :class:`~streamflow.wire.dialects._emitter.Emitter` (a writer: it holds an Assembler and
closes the open group itself before a fragment of another kind or ``stop``, see
:data:`WRITER_CLOSES`) and the ``uni`` dialect (which validates UniEvents from the
wire through an Assembler) all step through it. The one pair taken without a table
step is :data:`GROWS`, the per-token self-loop, in ``Assembler.fragment`` only.

States: :data:`IDLE` (between groups), :data:`OPEN` (a group is open),
:data:`STOPPED` (the stream is over). Symbols, classified by :func:`symbol`:

=============  =============================================================
``DELTA``      a ``K.delta`` when no group is open, or of the open group's kind
``OTHER``      a ``K.delta`` of another kind than the open group
``DONE``       a ``K.done`` of the open group's kind (or with no group open)
``OTHER_DONE`` a ``K.done`` of another kind than the open group
``STOP``       the stop event
=============  =============================================================
"""

from __future__ import annotations

from typing import Final

from .errors import ProtocolError

IDLE: Final = "idle"
OPEN: Final = "open"
STOPPED: Final = "stopped"

DELTA: Final = "delta"
OTHER: Final = "other"
DONE: Final = "done"
OTHER_DONE: Final = "other_done"
STOP: Final = "stop"

#: ``(state, symbol) -> next state``; a pair missing here breaks the grammar.
TRANSITIONS: Final[dict[tuple[str, str], str]] = {
    (IDLE, DELTA): OPEN,
    (IDLE, STOP): STOPPED,
    (OPEN, DELTA): OPEN,
    (OPEN, DONE): IDLE,
}

#: The pairs a writer turns legal by closing the open group (``DONE``) first: the
#: :class:`~streamflow.wire.dialects._emitter.Emitter` reads it when a fragment of another
#: kind, or ``stop``, arrives while a group is open.
WRITER_CLOSES: Final[frozenset[tuple[str, str]]] = frozenset({(OPEN, OTHER), (OPEN, STOP)})

#: The per-token pair: a ``K.delta`` of the open group's kind keeps the state. Readers
#: and the writer take it without a table step (the fragment is appended); every other
#: pair goes through :func:`step`.
GROWS: Final[tuple[str, str]] = (OPEN, DELTA)

_WHY: Final[dict[tuple[str, str], str]] = {
    (IDLE, DONE): "{what} without a {kind}.delta before it",
    (OPEN, OTHER): "{what} while a {open} group is open",
    (OPEN, OTHER_DONE): "{what} while a {open} group is open",
    (OPEN, STOP): "stop while a {open} group is open",
}

if TRANSITIONS[GROWS] != OPEN:  # the self-loop the per-token paths rely on
    raise AssertionError("the grammar's (OPEN, DELTA) pair must keep the group open")


def symbol(kind: str | None, done: bool, open_kind: str | None) -> str:
    """The symbol of an event: ``kind`` of its item (``None`` for stop), ``done`` phase."""
    if kind is None:
        return STOP
    if open_kind is None or open_kind == kind:
        return DONE if done else DELTA
    return OTHER_DONE if done else OTHER


def refusal(state: str, sym: str, *, what: str = "event", kind: str = "",
            open_kind: str | None = None) -> ProtocolError:
    """The error for a pair the table has no entry for: the one wording of each rule."""
    if state == STOPPED:
        return ProtocolError("second stop for one stream" if sym == STOP
                             else f"{what} after stop")
    why = _WHY.get((state, sym), "{what} is not allowed here")
    return ProtocolError(why.format(what=what, kind=kind, open=open_kind))


def step(state: str, sym: str, *, what: str = "event", kind: str = "",
         open_kind: str | None = None) -> str:
    """The state after ``sym`` in ``state``; a ``ProtocolError`` when the table has no entry."""
    nxt = TRANSITIONS.get((state, sym))
    if nxt is not None:
        return nxt
    raise refusal(state, sym, what=what, kind=kind, open_kind=open_kind)


# -- the shape of one event (a delta holds one item, stop holds none) -----------------
def items_refusal(event_type: str, count: int) -> ProtocolError:
    """A ``delta`` without exactly one item, or a ``stop`` with items."""
    if event_type == "stop":
        return ProtocolError("stop event carries items")
    return ProtocolError(f"delta event with {count} items")


#: A ``delta`` event carrying what only ``stop`` carries.
DELTA_WITH_ENDING: Final = "delta event with a finish_reason or usage"
#: A ``stop`` event missing what it must carry.
STOP_WITHOUT_ENDING: Final = "stop event without usage_metadata and a finish_reason"
