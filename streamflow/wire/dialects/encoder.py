"""The sans-IO encoder base: UniEvents in, one target's body bytes out.

An encoder is the mirror of a :class:`~streamflow.wire.dialects.base.Decoder`. It is fed
the events of one stream in order and returns the bytes to write for each, as they
arrive (nothing is buffered past what the target needs)::

    enc = get_encoder("anthropic")()
    for event in events:
        out.write(enc.feed(event))   # the stop event writes the dialect's terminator
    # or, when the stream failed:
    out.write(enc.fail(error))       # the dialect's in-band error event

``feed`` returns ``b""`` when an event writes nothing yet. After ``stop`` or ``fail``
the encoder is finished: feeding more raises ``RuntimeError`` (a caller bug).
Options that choose between equally valid renderings ("flavours", such as the
reasoning field of openai-chat) are keyword arguments of the constructor.

The helpers below are what every encoder shares: compact JSON (``pydantic_core``),
SSE framing, the message-level ``provider`` slots (``id``/``model`` from the first
event, the rest from the stop event), the choice of a raw finish reason, and the
one conversion of a UniEvent time (ms) to a body's seconds (:func:`unix_seconds`).

:class:`BodyWriter` is THE encode routine: ``streamflow.encode()``,
``operators.encode()``, the gateway and the web responses all write bodies through
it, so a stream ends the same way everywhere -- after ``stop`` with the terminator,
after a typed error with the target's in-band error, and, when the events run out
without ``stop``, with the in-band error of an :class:`IncompleteStreamError`, which
the caller then raises. Every byte written from events passes its ``check``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any, ClassVar, TypeVar

from ...core.delivery import DELIVERY
from ...core.errors import IncompleteStreamError, ProviderError, StreamflowError
from ...core.events import (
    CHOICE_FINISH_REASONS,
    USAGE_SO_FAR,
    JSONDict,
    UniEvent,
    Usage,
    choice_index,
    is_done,
    usage_so_far,
)

_E = TypeVar("_E", bound=BaseException)

__all__ = ["BodyWriter", "Encoder", "error_fields", "native_reason", "new_id",
           "slot_index", "unix_seconds"]


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``msg_3f2a...`` for a field the source did not carry."""
    return prefix + uuid.uuid4().hex[:24]


def native_reason(raw: Any, finish: str | None, decode: Callable[[str], str],
                  default: str) -> str:
    """The raw finish value to write: ``raw`` when it reads back as ``finish``, else ``default``.

    ``decode`` maps a raw value onto a UniEvent finish reason the way the target's
    decoder does, so a raw value from another dialect never changes the meaning.
    """
    if type(raw) is str and raw and decode(raw) == finish:
        return raw
    return default


def unix_seconds(created_at_ms: int | None) -> int:
    """A UniEvent/Message time (ms since the epoch) as a body's seconds; now when unknown."""
    return created_at_ms // 1000 if created_at_ms else int(time.time())


def slot_index(provider: JSONDict, *keys: str) -> int:
    """The first integer among ``provider[key]`` (a choice or candidate index), else 0."""
    for key in keys:
        value = provider.get(key)
        if type(value) is int:
            return value
    return 0


def error_fields(error: StreamflowError) -> tuple[str, str, Any]:
    """``(type, message, code)`` of an error, for a dialect's error envelope."""
    if isinstance(error, ProviderError):
        return (error.type or "api_error", error.message, error.code)
    return (type(error).__name__, error.message, None)


class Encoder:
    """Base of every encoder; subclasses implement :meth:`encode_event` and :meth:`encode_error`.

    ``name`` is the registry name, ``media_type`` the HTTP content type of the body.
    ``meta`` collects the message-level provider slots seen so far (``id`` and
    ``model`` ride on the first event, everything else on the stop event).
    """

    name: ClassVar[str] = ""
    media_type: ClassVar[str] = "text/event-stream"
    #: whether the target carries several choices (``n > 1``) apart; a target that does
    #: not writes the first choice only: the groups of the others are not written, nor
    #: their message-level slots (``choices``, ``candidates``)
    carries_choices: ClassVar[bool] = False

    def __init__(self, **flavour: Any) -> None:
        if flavour:
            raise TypeError(f"{type(self).__name__} takes no option {sorted(flavour)!r}")
        self.finished = False
        self.started = False
        self.meta: JSONDict = {}
        #: the counts the provider reported before the first item (the first event's
        #: ``provider["usage_so_far"]``), for the target's opening events; else None
        self.usage_so_far: Usage | None = None
        self._other_choice: bool | None = None  # the open group is another choice's

    def take_provider(self, event: UniEvent) -> None:
        """Merge ``event``'s provider slot into :attr:`meta`, less UniEvent's own keys
        (the counts so far go to :attr:`usage_so_far`; the choices' finish reasons, how
        the answer was delivered -- its endpoints are the server's business, not its
        client's -- and the other choices' slots for a target without choices, are not
        written)."""
        provider = event.provider
        if not provider:
            return
        if USAGE_SO_FAR in provider or CHOICE_FINISH_REASONS in provider or (
                DELIVERY in provider) or (not self.carries_choices and (
                    "choices" in provider or "candidates" in provider)):
            if event.event_type == "delta" and USAGE_SO_FAR in provider:
                self.usage_so_far = usage_so_far(provider)
            drop = {USAGE_SO_FAR, CHOICE_FINISH_REASONS, DELIVERY}
            if not self.carries_choices:
                drop |= {"choices", "candidates"}
            provider = {k: v for k, v in provider.items() if k not in drop}
        self.meta.update(provider)

    def other_choice(self, event: UniEvent) -> bool:
        """True for a delta event of a choice other than the first when the target does
        not carry choices (its group is not written). A group's first fragment says
        whose it is (Gemini tags only that one)."""
        if self.carries_choices or event.event_type != "delta" or not event.content_items:
            return False
        item = event.content_items[0]
        other = self._other_choice
        if other is None:
            other = self._other_choice = choice_index(item) != 0
        if is_done(item):
            self._other_choice = None
        return other

    def feed(self, event: UniEvent) -> bytes:
        """The bytes for ``event``; the ``stop`` event also writes the terminator."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder fed after its stream ended")
        self.take_provider(event)
        head = b""
        if not self.started:
            self.started = True
            head = self.start(event)
        if event.event_type == "stop":
            self.finished = True
        elif self.other_choice(event):
            return head
        return head + self.encode_event(event)

    def fail(self, error: StreamflowError) -> bytes:
        """The bytes that end the stream with ``error`` (the dialect's in-band error),
        written with no credential in it (:func:`streamflow.wire.redaction.scrub_error`)."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder failed after its stream ended")
        self.finished = True
        from ..redaction import scrub_error
        return self.encode_error(scrub_error(error))

    def end(self) -> bytes | None:
        """The bytes that end a body whose events ran out: ``b""`` after ``stop`` or
        ``fail``, ``None`` when the body is incomplete (no ``stop`` came)."""
        return b"" if self.finished else None

    def start(self, event: UniEvent) -> bytes:
        """Subclass hook: the bytes that open the body, written before the first event."""
        return b""

    def encode_event(self, event: UniEvent) -> bytes:
        """Subclass hook: the bytes of one event (``stop`` included)."""
        raise NotImplementedError

    def encode_error(self, error: StreamflowError) -> bytes:
        """Subclass hook: the bytes of the terminal error."""
        raise NotImplementedError


class BodyWriter:
    """The one encode routine: ``encoder``'s body from a UniEvent stream (module doc).

    Push events with :meth:`feed` and end with :meth:`close` (why the events ended:
    nothing, a typed failure, a bug), which says what to write last and what to raise;
    :meth:`body` (an iterable), :meth:`abody` (async batches), the ``encode`` operator
    and the web responses are drivers of those two.
    """

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder

    @property
    def finished(self) -> bool:
        """Whether the body has ended (terminator, in-band error or a finished run)."""
        return self.encoder.finished

    def check(self, data: bytes) -> bytes:
        """Every byte of the body passes here (the one place to check what is written);
        a caller writing an encoder's other output (tool results) passes it too."""
        return data

    def feed(self, event: UniEvent) -> bytes:
        """The bytes of one event (``b""`` when it writes nothing yet)."""
        return self.check(self.encoder.feed(event))

    def feed_all(self, events: Iterable[UniEvent]) -> bytes:
        """The bytes of several events, joined."""
        feed = self.encoder.feed
        return self.check(b"".join([feed(e) for e in events]))

    def fail(self, error: StreamflowError, before: Iterable[UniEvent] = ()) -> bytes:
        """``before`` (events decoded ahead of the failure) then the in-band error of
        ``error``; ``b""`` when the body has already ended."""
        if self.finished:
            return b""
        head = self.feed_all(before)
        if self.finished:  # ``before`` held the stop event: the body is whole
            return head
        return head + self.check(self.encoder.fail(error))

    def end(self) -> tuple[bytes, IncompleteStreamError | None]:
        """The bytes that close the body when the events ran out, and the error to raise
        after writing them (an :class:`IncompleteStreamError` when no ``stop`` came)."""
        tail = self.encoder.end()
        if tail is not None:
            return self.check(tail), None
        error = IncompleteStreamError(
            f"the event stream ended without a stop event ({self.encoder.name} body cut)")
        return self.check(self.encoder.fail(error)), error

    def close(self, error: _E | None = None, before: Iterable[UniEvent] = ()
              ) -> tuple[bytes, _E | IncompleteStreamError | None]:
        """How the body ends, for every driver: the bytes to write last and the error to
        raise after them. ``error`` is why the events ended (``None``: they ran out):
        a :class:`StreamflowError` is written in-band (after ``before``) and raised
        again; no ``stop`` is an :class:`IncompleteStreamError`, written and raised; any
        other exception (a bug) writes nothing and is raised as it is."""
        if error is None:
            return self.end()
        if isinstance(error, StreamflowError):
            return self.fail(error, before), error
        return b"", error

    def body(self, events: Iterable[UniEvent]) -> Iterator[bytes]:
        """The whole body of ``events``, chunk by chunk; a typed error from iterating them
        is written in-band and raised again, a missing ``stop`` likewise."""
        error: StreamflowError | None = None
        try:
            for event in events:
                out = self.feed(event)
                if out:
                    yield out
        except StreamflowError as exc:
            error = exc
        tail, raised = self.close(error)
        if tail:
            yield tail
        if raised is not None:
            raise raised

    async def abody(self, batches: AsyncIterable[Iterable[UniEvent]],
                    convert: Callable[[UniEvent], UniEvent] | None = None,
                    ) -> AsyncIterator[bytes]:
        """Like :meth:`body` over batches of events (``convert`` maps each event first).

        A typed error's ``events`` (decoded in the failing call, not yet delivered)
        are written before its in-band error.
        """
        error: StreamflowError | None = None
        try:
            async for events in batches:
                out = self.feed_all(events if convert is None else map(convert, events))
                if out:
                    yield out
        except StreamflowError as exc:
            error = exc
        before = () if error is None else \
            error.events if convert is None else map(convert, error.events)
        tail, raised = self.close(error, before)
        if tail:
            yield tail
        if raised is not None:
            raise raised
