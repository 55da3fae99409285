"""The fault cases of docs/FAULTS.md, their expected outcome, and what every outcome must obey.

Every case is ``name -> (faults for a dialect's body, expected error type or None)``;
:func:`decode_in_memory` runs the sans-IO core, :func:`check_outcome` asserts the
rules that hold for every fault: one typed error (or the intact message), the partial
message kept, and no ``stop`` event before an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from fault_bodies import EXPECTED_TEXT, TEXT_PARTS

from streamflow import (
    IncompleteStreamError,
    Message,
    ProtocolError,
    ProviderError,
    StreamDecoder,
    StreamflowError,
    TransportError,
    UniEvent,
)
from streamflow.core.events import item_to_dict
from streamflow.faults import (
    ByEvent,
    Cut,
    Drip,
    DropTerminator,
    Duplicate,
    ErrorSpec,
    Fault,
    InsertError,
    mid_char_offset,
    mid_event_offset,
    payload,
    profile_for,
    split_events,
)

Case = Callable[[str, bytes], tuple[Fault, ...]]
NDJSON = ("ollama", "uni-jsonl")
ERROR = ErrorSpec(code=529, type=None, message="Overloaded (injected)")
#: code and type each dialect's in-band error carries (``ErrorSpec`` type left to the dialect)
PROVIDER_FIELDS: dict[str, tuple[Any, Any]] = {
    "anthropic": (None, "overloaded_error"),
    "openai-chat": (529, "provider_unavailable"),
    "openai-responses": ("server_error", "server_error"),
    "gemini": (529, "UNAVAILABLE"),
    "ollama": (None, None),
    "bedrock": (529, "ThrottlingException"),
    "uni": (529, "overloaded_error"),
    "uni-jsonl": (529, "overloaded_error"),
}


def text_event(dialect: str, body: bytes, part: int) -> int:
    """Index of the framed event that carries text part ``part``."""
    needle = TEXT_PARTS[part].encode()
    for i, event in enumerate(split_events(body, profile_for(dialect).framing)):
        if needle in event:
            return i
    raise LookupError(part)


def _cut_mid_event(dialect: str, body: bytes) -> tuple[Fault, ...]:
    framing = profile_for(dialect).framing
    return (Cut(mid_event_offset(body, text_event(dialect, body, 3), framing)),)


def _cut_mid_char(dialect: str, body: bytes) -> tuple[Fault, ...]:
    return (Cut(mid_char_offset(body, body.index(TEXT_PARTS[3].encode()))),)


def _cut_reset(dialect: str, body: bytes) -> tuple[Fault, ...]:
    framing = profile_for(dialect).framing
    return (Cut(mid_event_offset(body, text_event(dialect, body, 3), framing), reset=True),)


def _error_after_text(dialect: str, body: bytes) -> tuple[Fault, ...]:
    return (InsertError(dialect, after=text_event(dialect, body, 2) + 1, error=ERROR),)


def _error_then_rest(dialect: str, body: bytes) -> tuple[Fault, ...]:
    return (InsertError(dialect, after=text_event(dialect, body, 2) + 1, error=ERROR,
                        keep_rest=True),)


CASES: dict[str, tuple[Case, Callable[[str], type[Exception] | None]]] = {
    "cut_mid_event": (_cut_mid_event,
                      lambda d: ProtocolError if d in NDJSON else IncompleteStreamError),
    "cut_mid_utf8": (_cut_mid_char,
                     lambda d: ProtocolError if d in NDJSON else IncompleteStreamError),
    "cut_reset": (_cut_reset, lambda d: TransportError),
    "drop_terminator": (lambda d, b: (DropTerminator(d),), lambda d: IncompleteStreamError),
    "provider_error": (_error_after_text, lambda d: ProviderError),
    "provider_error_then_more": (_error_then_rest, lambda d: ProviderError),
    "drip": (lambda d, b: (Drip(),), lambda d: None),
    "duplicate_text_event": (
        lambda d, b: (ByEvent(profile_for(d).framing), Duplicate(text_event(d, b, 1))),
        lambda d: ProtocolError if d.startswith("uni") else None),
}


def decode_in_memory(dialect: str, chunks: list[bytes]) -> tuple[list[UniEvent], Any]:
    """The events, and the message or the error, of the sans-IO core over ``chunks``."""
    decoder = StreamDecoder(dialect)
    events: list[UniEvent] = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.close()
    except Exception as exc:
        return events, exc
    return events, decoder.message


def items(message: Message) -> list[dict[str, Any]]:
    """The items of a message as JSON (comparable across runs: no timestamps)."""
    return [item_to_dict(i) for i in message.items]


def check_outcome(dialect: str, name: str, events: list[Any], outcome: Any,
                  expected: type[Exception] | None) -> None:
    """The rules every fault outcome obeys (see the module doc)."""
    stops = [e for e in events if isinstance(e, UniEvent) and e.event_type == "stop"]
    if expected is None:
        assert isinstance(outcome, Message), outcome
        assert outcome.complete and len(stops) == 1 and events[-1] is stops[0]
        if name == "drip":
            assert outcome.text == EXPECTED_TEXT
        return
    assert type(outcome) is expected or (
        expected is ProviderError and type(outcome) is ProviderError), repr(outcome)
    assert isinstance(outcome, StreamflowError)
    assert stops == [], "a stop event was emitted before the error"
    partial = outcome.partial
    assert partial is not None and not partial.complete
    if name != "duplicate_text_event":
        assert EXPECTED_TEXT.startswith(partial.text), partial.text
    if name.startswith("provider_error"):
        assert partial.text == "".join(TEXT_PARTS[:3])
        assert outcome.message == ERROR.message
        code, type_ = PROVIDER_FIELDS[dialect]
        assert (outcome.code, outcome.type) == (code, type_)  # type: ignore[attr-defined]
    if name == "drop_terminator" and dialect != "gemini":  # gemini's finish chunk has text
        assert partial.text == EXPECTED_TEXT


def sans_io_chunks(dialect: str, body: bytes, faults: tuple[Fault, ...]) -> list[bytes]:
    """The bytes a fault leaves, for the sans-IO core (a reset is a clean end there)."""
    from streamflow.faults import apply

    return payload(apply(body, *faults))


async def live_tasks(wait: float = 0.0) -> set[Any]:
    """The tasks alive now, on asyncio or trio (to assert none is left running)."""
    await anyio.sleep(wait)
    try:
        import asyncio

        return {t for t in asyncio.all_tasks() if not t.done()}
    except RuntimeError:
        import trio

        found: set[Any] = set()

        def walk(task: Any) -> None:
            found.add(task)
            for nursery in task.child_nurseries:
                for child in nursery.child_tasks:
                    walk(child)

        walk(trio.lowlevel.current_root_task())
        return found


async def settle(baseline: set[Any], timeout: float = 3.0) -> set[Any]:
    """Wait until no task beyond ``baseline`` is alive; returns the extra ones left."""
    extra: set[Any] = set()
    with anyio.move_on_after(timeout):
        while True:
            extra = await live_tasks() - baseline
            if not extra:
                return extra
            await anyio.sleep(0.01)
    return extra
