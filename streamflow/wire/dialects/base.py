"""What every dialect shares: the :class:`Decoder` interface (and the :class:`Emitter`).

A dialect module holds the provider's typed wire models (pydantic, for the ``decode``
operator and for users who want them) and a :class:`Decoder` subclass that turns
frames into UniEvents. On the per-token path the decoder reads the JSON payload
with ``pydantic_core.from_json`` into plain dicts and maps it by hand: that is 3x
cheaper than validating a model per event, and the wire models stay the
documented schema. Anything malformed surfaces as a typed ``ProtocolError``.

The :class:`~streamflow.wire.dialects._emitter.Emitter` is the one writer of UniEvents
all dialects go through (grammar, limits, partial message).

The error contract is h11's: for bad input a decoder raises only streamflow errors
(``load_json`` here, and the checked readers of :mod:`streamflow.wire.dialects._readers`
every dialect reads its fields with, raise them where bad input can cause them); any
other exception out of :meth:`Decoder.handle` is a bug of ours and propagates as itself.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Generic, TypeVar

from mypy_extensions import mypyc_attr
from pydantic_core import from_json

from ..._build import is_compiled
from ...core.errors import IncompleteStreamError, ProtocolError, StreamflowError
from ...core.events import UniEvent
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.message import Message
from ..framing.sse import ServerSentEvent
from ._emitter import Emitter, merge_provider

ErrorFields = tuple[str | None, str | None, str | None]

__all__ = ["FAST_JSON", "Decoder", "Emitter", "ErrorFields", "load_frame", "load_json",
           "merge_provider", "now_ms", "parse_frame", "parse_payload"]

try:  # the optional ``fast`` extra, used by the compiled build only: in pure Python the
    # check that orjson read what from_json reads costs more than orjson saves
    import orjson

    FAST_JSON: Any = orjson.loads if is_compiled() else None
except ImportError:  # pragma: no cover - depends on the environment
    FAST_JSON = None
_MAX_DEPTH: Final = 190  # from_json refuses nesting past about 200; deeper is left to it
_BIG: Final = 2.0**63  # orjson reads integers past 64 bits as floats at least this large


_time_ns: Final = time.time_ns  # bound once (compiled: no module attribute lookup per read)


def now_ms() -> int:
    """Unix time in milliseconds."""
    return _time_ns() // 1_000_000


def _exact(value: dict[str, Any], depth: int) -> bool:
    """False where orjson's result may differ from ``from_json``'s: a float that may
    stand for an integer past 64 bits, or nesting ``from_json`` refuses (~200 deep).
    (Typed containers: compiled, the walk is a native loop.)"""
    if depth > _MAX_DEPTH:
        return False
    return all(_exact_value(v, depth) for v in value.values())


def _exact_list(value: list[Any], depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    return all(_exact_value(v, depth) for v in value)


def _exact_value(v: Any, depth: int) -> bool:
    t = type(v)
    if t is dict:
        return _exact(v, depth + 1)
    if t is list:
        return _exact_list(v, depth + 1)
    return t is not float or _small(v)


def _small(f: float) -> bool:
    return -_BIG < f < _BIG


class _Differs:
    """The mark of a payload orjson may read otherwise than ``from_json``."""


_DIFFERS: Final = _Differs()


def _fast(data: str | bytes) -> Any:
    """orjson's reading of ``data``, or ``_DIFFERS`` where ``from_json`` must decide:
    malformed, NaN/Infinity, invalid UTF-8 bytes, 1024 deep, integers past 64 bits."""
    try:
        value = FAST_JSON(data)
    except ValueError:
        return _DIFFERS
    t = type(value)
    if t is dict:
        return value if _exact(value, 1) else _DIFFERS
    if t is list:
        return value if _exact_list(value, 1) else _DIFFERS
    return value if t is not float or _small(value) else _DIFFERS


def parse_payload(data: str | bytes) -> Any:
    """``pydantic_core.from_json(data)``, through orjson when the ``fast`` extra is installed
    and it reads the same values (else ``from_json`` decides); ``ValueError`` if malformed."""
    if FAST_JSON is not None:
        value = _fast(data)
        if value is not _DIFFERS:
            return value
    return from_json(data)


def parse_frame(frame: ServerSentEvent) -> Any:
    """:func:`parse_payload` of an SSE frame's data, read from its bytes as they came (no
    decode); bytes that are not valid UTF-8 are read as the frame's text (U+FFFD)."""
    raw = frame.raw
    if FAST_JSON is not None:
        value = _fast(raw)
        if value is not _DIFFERS:
            return value
    try:
        return from_json(raw)  # valid UTF-8 reads as its text reads
    except ValueError:  # invalid UTF-8 (U+FFFD in the text), or malformed: the text decides
        return from_json(frame.data)


def load_json(data: str | bytes, what: str = "event") -> Any:
    """Parse one JSON payload; a malformed one is a ``ProtocolError`` keeping the raw text."""
    try:
        return parse_payload(data)
    except ValueError as exc:
        raise ProtocolError(f"malformed JSON in {what}: {exc}", raw=data) from None


def load_frame(frame: ServerSentEvent, what: str = "event") -> Any:
    """:func:`load_json` of an SSE frame's data (read by :func:`parse_frame`)."""
    try:
        return parse_frame(frame)
    except ValueError as exc:
        raise ProtocolError(f"malformed JSON in {what}: {exc}", raw=frame.data) from None


F = TypeVar("F")  # the frame type of the dialect's framing (see streamflow.wire.framing.Frame)


@mypyc_attr(allow_interpreted_subclasses=True)  # the other dialects and users subclass it
class Decoder(ABC, Generic[F]):
    """Sans-IO decoder of one dialect: feed frames, get UniEvents.

    ``feed(frame)`` returns the events that frame completes; ``close()`` ends the
    input and raises :class:`IncompleteStreamError` when the dialect's terminator
    never came. Every error raised carries the partial message (:attr:`partial`).
    Subclasses set ``name`` (the registry key), ``framing`` (``"sse"``,
    ``"ndjson"``, ``"eventstream"`` or ``"raw"``), implement :meth:`handle` and
    :meth:`sniff`, and may override :meth:`finish`.
    """

    name: ClassVar[str] = ""
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "its terminator"
    #: ``gen_ai.provider.name`` of the provider (OpenTelemetry semantic conventions)
    provider_name: ClassVar[str] = ""

    # -- facts about the dialect (read by the faults, the sinks, the sources) --
    @classmethod
    def is_terminator(cls, frame: Any) -> bool:
        """True if ``frame`` is the event that ends a stream of this dialect."""
        return False

    @classmethod
    def error_frame(cls, code: int, type: str | None, message: str) -> bytes | None:
        """An in-band error as this provider writes it after a ``200`` (``type=None``:
        its usual "overloaded" type); ``None`` when the dialect has no such event."""
        return None

    @classmethod
    def http_error(cls, payload: Any, headers: Mapping[str, str]) -> ErrorFields:
        """``(message, type, request_id)`` from this provider's non-2xx error envelope."""
        return None, None, None

    def __init__(self, *, limits: Limits | None = None, clock: Any = None) -> None:
        self.limits = limits or DEFAULT_LIMITS
        self._clock = clock or now_ms
        self.emitter = Emitter(self.limits)
        #: the framing the body actually came in (``"ndjson"``: a JSON-lines recording
        #: of an SSE stream, where an SSE-only terminator such as ``[DONE]`` cannot appear)
        self.framed_as: str = self.framing
        #: set before :meth:`close` when the framer discarded a frame cut by the end of body
        self.cut = False

    @property
    def partial(self) -> Message:
        """The message assembled from everything fed so far."""
        return self.emitter.message

    @property
    def stopped(self) -> bool:
        """True once the stop event was emitted."""
        return self.emitter.stopped

    def feed(self, frame: F) -> list[UniEvent]:
        """Decode one frame into zero or more UniEvents, stamped with the clock's time now."""
        self.tick()
        return self.feed_at(frame)

    def tick(self) -> None:
        """Read the clock once: the events of the frames fed next by :meth:`feed_at` carry it."""
        clock = self._clock
        self.emitter.now = now_ms() if clock is now_ms else clock()  # the default: a native call

    def feed_at(self, frame: F) -> list[UniEvent]:
        """Decode one frame, its events stamped with the time of the last :meth:`tick`
        (the :class:`~streamflow.StreamDecoder` ticks once per chunk, not per frame)."""
        em = self.emitter
        try:
            self.handle(frame)
        except StreamflowError as exc:
            exc.attach(self.partial, em.drain())
            raise
        return em.drain()

    def close(self) -> list[UniEvent]:
        """End of input: flush what the dialect allows, or raise ``IncompleteStreamError``."""
        em = self.emitter
        em.now = self._clock()
        try:
            self.finish()
        except StreamflowError as exc:
            exc.attach(self.partial, em.drain())
            raise
        return em.drain()

    def finish(self) -> None:
        """Called at end of input; the default requires that stop was already emitted."""
        if not self.emitter.stopped:
            raise IncompleteStreamError(
                f"{self.name} stream ended without {self.terminator}")

    @abstractmethod
    def handle(self, frame: F) -> None:
        """Map one frame onto the emitter."""

    @classmethod
    @abstractmethod
    def sniff(cls, frame: Any) -> bool:
        """True if ``frame`` (the first meaningful frame of a body) belongs to this dialect."""
