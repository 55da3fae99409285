"""The UniEvent grammar of seed 001, written once: states, symbols and one transition table.

A stream is ``(K.delta+ K.done)* stop``: groups of one kind that never interleave,
then exactly one ``stop``. Like h11's ``_state.py`` this module holds only the
table; the :class:`~streamflow.message.Assembler` (a reader: it rejects what breaks
the table), the :class:`~streamflow.dialects.base.Emitter` (a writer: it holds an
Assembler and closes the open group itself before a fragment of another kind or
``stop``, see :data:`WRITER_CLOSES`) and the ``uni`` dialect (which validates
UniEvents from the wire through an Assembler) all step through it.

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

__all__ = ["DELTA", "DONE", "IDLE", "OPEN", "OTHER", "OTHER_DONE", "STOP", "STOPPED",
           "TRANSITIONS", "WRITER_CLOSES", "step", "symbol"]

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

#: The pairs a writer turns legal by closing the open group (``DONE``) first.
WRITER_CLOSES: Final[frozenset[tuple[str, str]]] = frozenset({(OPEN, OTHER), (OPEN, STOP)})

_WHY: Final[dict[tuple[str, str], str]] = {
    (IDLE, DONE): "{what} without a {kind}.delta before it",
    (OPEN, OTHER): "{what} while a {open} group is open",
    (OPEN, OTHER_DONE): "{what} while a {open} group is open",
    (OPEN, STOP): "stop while a {open} group is open",
}


def symbol(kind: str | None, done: bool, open_kind: str | None) -> str:
    """The symbol of an event: ``kind`` of its item (``None`` for stop), ``done`` phase."""
    if kind is None:
        return STOP
    if open_kind is None or open_kind == kind:
        return DONE if done else DELTA
    return OTHER_DONE if done else OTHER


def step(state: str, sym: str, *, what: str = "event", kind: str = "",
         open_kind: str | None = None) -> str:
    """The state after ``sym`` in ``state``; a ``ProtocolError`` when the table has no entry."""
    nxt = TRANSITIONS.get((state, sym))
    if nxt is not None:
        return nxt
    if state == STOPPED:
        raise ProtocolError("second stop for one stream" if what == "stop"
                            else f"{what} after stop")
    why = _WHY.get((state, sym), "{what} is not allowed here")
    raise ProtocolError(why.format(what=what, kind=kind, open=open_kind))
