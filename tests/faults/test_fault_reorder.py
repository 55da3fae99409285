"""Duplicated and reordered events: exactly what each one gives.

A duplicated or swapped event is either caught by the dialect's own ordering rules
(a typed ``ProtocolError`` / ``ToolCallArgumentParseError``, partial kept) or it is
indistinguishable from a provider that really sent that -- a *wrong but typed*
message (a text fragment twice, two fragments swapped). The tables below pin each
outcome for the Anthropic and OpenAI chat bodies; the property test runs every
event of every dialect.
"""

from __future__ import annotations

import pytest
from fault_bodies import EXPECTED_TEXT, available, body_for
from fault_cases import decode_in_memory

from streamflow import (
    Message,
    ProtocolError,
    StreamflowError,
    ToolCallArgumentParseError,
)
from streamflow.faults import ByEvent, Duplicate, Swap, apply, payload, profile_for, split_events

DUP, SWAP = "duplicate", "swap"

# (fault, event index, outcome): a type, or the text of the (wrong but complete) message
ANTHROPIC = [
    (DUP, 0, ProtocolError),          # message_start twice
    (DUP, 1, EXPECTED_TEXT),          # ping twice: harmless
    (DUP, 2, ProtocolError),          # content_block_start twice
    (DUP, 5, ProtocolError),          # content_block_stop of a closed block
    (DUP, 7, "GrüßeGrüße aus Köln — 你好!"),   # a text delta twice: wrong but typed
    (DUP, 14, ToolCallArgumentParseError),     # an input_json_delta twice
    (DUP, 18, EXPECTED_TEXT),         # message_delta twice: cumulative usage, harmless
    (SWAP, 7, " aus GrüßeKöln — 你好!"),     # two text deltas swapped: wrong but typed
    (SWAP, 2, ProtocolError),         # a delta before its block started
    (SWAP, 11, ProtocolError),        # content_block_stop before the last delta
    (SWAP, 15, ToolCallArgumentParseError),    # argument fragments swapped
]
OPENAI_CHAT = [
    (DUP, 0, EXPECTED_TEXT),          # the role chunk twice
    (DUP, 1, "GrüßeGrüße aus Köln — 你好!"),
    (DUP, 7, ToolCallArgumentParseError),      # an arguments fragment twice
    (DUP, 12, EXPECTED_TEXT),         # [DONE] twice: tolerated
    (SWAP, 1, " aus GrüßeKöln — 你好!"),
    (SWAP, 5, ProtocolError),         # text after the tool call started, then its fragment
    (SWAP, 6, ProtocolError),         # an arguments fragment before the call's first one
]
TABLE = [("anthropic", *row) for row in ANTHROPIC] + [("openai-chat", *row) for row in OPENAI_CHAT]


def _faulted(dialect: str, fault: str, index: int) -> list[bytes]:
    framing = profile_for(dialect).framing
    move = Duplicate(index) if fault == DUP else Swap(index)
    return payload(apply(body_for(dialect), ByEvent(framing), move))


@pytest.mark.parametrize(("dialect", "fault", "index", "outcome"), TABLE)
def test_each_duplicate_and_swap_has_one_defined_outcome(dialect: str, fault: str, index: int,
                                                         outcome: object) -> None:
    events, result = decode_in_memory(dialect, _faulted(dialect, fault, index))
    stops = [e for e in events if e.event_type == "stop"]
    if isinstance(outcome, str):
        assert isinstance(result, Message) and result.complete
        assert result.text == outcome and len(stops) == 1
    else:
        assert type(result) is outcome, result
        assert stops == []
        assert result.partial is not None and not result.partial.complete


def _cases() -> list[tuple[str, str, int]]:
    out = []
    for dialect in available():
        count = len(split_events(body_for(dialect), profile_for(dialect).framing))
        out += [(dialect, DUP, i) for i in range(count)]
        out += [(dialect, SWAP, i) for i in range(count - 1)]
    return out


def _after_the_end(dialect: str, fault: str, index: int) -> bool:
    """True when the fault only moves or repeats the terminator or what follows it."""
    events = split_events(body_for(dialect), profile_for(dialect).framing)
    is_end = profile_for(dialect).is_terminator
    end = next((i for i, e in enumerate(events) if is_end and is_end(e)), len(events) - 1)
    return index >= end or (fault == SWAP and index + 1 >= end)


@pytest.mark.parametrize(("dialect", "fault", "index"), _cases())
def test_any_duplicate_or_swap_gives_a_message_or_a_typed_error(dialect: str, fault: str,
                                                                index: int) -> None:
    events, result = decode_in_memory(dialect, _faulted(dialect, fault, index))
    if isinstance(result, Message):
        assert result.complete and events[-1].event_type == "stop"
        return
    assert isinstance(result, StreamflowError), repr(result)  # never a bare exception
    assert result.partial is not None
    stops = [e for e in events if e.event_type == "stop"]
    if not _after_the_end(dialect, fault, index):
        assert stops == []


@pytest.mark.parametrize("dialect", ["anthropic", "ollama", "bedrock", "uni"])
def test_a_duplicated_last_event_never_gives_stop_and_an_error(dialect: str) -> None:
    last = len(split_events(body_for(dialect), profile_for(dialect).framing)) - 1
    got, result = decode_in_memory(dialect, _faulted(dialect, DUP, last))
    stops = [e for e in got if e.event_type == "stop"]
    assert not (stops and isinstance(result, Exception))
