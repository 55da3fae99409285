"""What every dialect shares: the :class:`Decoder` interface and the :class:`Emitter`.

A dialect module holds the provider's typed wire models (pydantic, for the ``decode``
operator and for users who want them) and a :class:`Decoder` subclass that turns
frames into UniEvents. On the per-token path the decoder reads the JSON payload
with ``pydantic_core.from_json`` into plain dicts and maps it by hand: that is 3x
cheaper than validating a model per event, and the wire models stay the
documented schema. Anything malformed surfaces as a typed ``ProtocolError``.

The :class:`Emitter` is where the UniEvent grammar is enforced once for all
dialects: one item per delta event, groups that never interleave (a fragment of
another kind closes the open group), ``.done`` items built from the first fragment
with the growing field replaced by everything the fragments carried, tool
arguments parsed strictly, limits counted, and a partial message always at hand.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from mypy_extensions import mypyc_attr
from pydantic_core import from_json

from .._build import is_compiled
from ..errors import (
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    StreamflowError,
)
from ..events import (
    ContentItem,
    FinishReason,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    join_fragments,
)
from ..limits import DEFAULT_LIMITS, Limits
from ..message import Assembler, Message
from ..partial_json import parse_arguments
from ..urls import flag_provider

__all__ = ["FAST_JSON", "Decoder", "Emitter", "expect_obj", "expect_str", "load_json",
           "merge_provider", "now_ms", "parse_payload"]

try:  # the optional ``fast`` extra, used by the compiled build only: in pure Python the
    # check that orjson read what from_json reads costs more than orjson saves
    import orjson

    FAST_JSON: Any = orjson.loads if is_compiled() else None
except ImportError:  # pragma: no cover - depends on the environment
    FAST_JSON = None
_MAX_DEPTH = 190  # from_json refuses nesting past about 200; deeper is left to it
_BIG = 2.0**63  # orjson reads integers past 64 bits as floats at least this large


def now_ms() -> int:
    """Unix time in milliseconds."""
    return time.time_ns() // 1_000_000


def _exact(value: Any, depth: int) -> bool:
    """False where orjson's result may differ from ``from_json``'s: a float that may
    stand for an integer past 64 bits, or nesting ``from_json`` refuses (~200 deep)."""
    if depth > _MAX_DEPTH:
        return False
    items = value.values() if type(value) is dict else value
    for v in items:
        t = type(v)
        if t is dict or t is list:
            if not _exact(v, depth + 1):
                return False
        elif t is float and not -_BIG < v < _BIG:
            return False
    return True


def parse_payload(data: str | bytes) -> Any:
    """``pydantic_core.from_json(data)``, through orjson when the ``fast`` extra is installed
    and it reads the same values (else ``from_json`` decides); ``ValueError`` if malformed."""
    fast = FAST_JSON
    if fast is not None:
        try:
            value = fast(data)
        except ValueError:  # NaN, Infinity, 1e400, lone surrogates, 1024 deep: from_json decides
            return from_json(data)
        t = type(value)
        if (t is not dict and t is not list) or _exact(value, 1):
            if t is not float or -_BIG < value < _BIG:
                return value
    return from_json(data)


def load_json(data: str | bytes, what: str = "event") -> Any:
    """Parse one JSON payload; a malformed one is a ``ProtocolError`` keeping the raw text."""
    try:
        return parse_payload(data)
    except ValueError as exc:
        raise ProtocolError(f"malformed JSON in {what}: {exc}", raw=data) from None


def expect_str(value: Any, what: str) -> str:
    """``value`` if it is a string (``None`` reads as ``""``), else a ``ProtocolError``."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise ProtocolError(f"{what} must be a string, got {type(value).__name__}")


def expect_obj(value: Any, what: str) -> JSONDict:
    """``value`` if it is a JSON object, else a ``ProtocolError`` naming ``what``."""
    if type(value) is not dict:
        raise ProtocolError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def merge_provider(into: JSONDict | None, more: JSONDict | None) -> JSONDict | None:
    """Merge provider slots of a group's fragments: lists concatenate, other values replace."""
    if not more:
        return into
    out = dict(into) if into else {}
    for key, value in more.items():
        old = out.get(key)
        if isinstance(old, list) and isinstance(value, list):
            out[key] = old + value
        else:
            out[key] = value
    return out


def _copy_lists(meta: JSONDict) -> JSONDict:
    return {k: list(v) if isinstance(v, list) else v for k, v in meta.items()}


class Emitter(Assembler):
    """Writes the UniEvents of one message and keeps its assembled state.

    Dialects call :meth:`delta` (or the ``text``/``thinking``/``tool_call`` shortcuts),
    :meth:`close_group` at a block boundary, :meth:`note` for message-level data and
    :meth:`stop` once. Events collect in ``out`` until the decoder drains them. As an
    :class:`Assembler` it can produce the partial message at any moment without
    re-reading the events it wrote.
    """

    __slots__ = ("out", "now", "limits", "_fidelity", "_provider", "_size", "_group_size",
                 "_groups", "_announced")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__()
        self.out: list[UniEvent] = []
        self.now = 0
        self.limits = limits
        self._fidelity: JSONDict | None = None
        self._provider: JSONDict | None = None
        self._size = 0
        self._group_size = 0
        self._groups = 0
        self._announced = False

    # -- groups ---------------------------------------------------------------
    @property
    def open_kind(self) -> str | None:
        """The kind of the open group, if any."""
        return self._open.kind if self._open is not None else None

    def delta(self, item: ContentItem) -> None:
        """Emit one ``K.delta`` item, opening (and closing another) group as needed."""
        if self._stopped:
            raise ProtocolError(f"{item.type} after the stream stopped")
        limits = self.limits
        kind = item.kind
        value = getattr(item, item.growing)
        size = len(value) if kind != "embedding" else 8 * len(value)
        open_ = self._open
        new_group = open_ is None or open_.kind != kind
        if new_group:
            if open_ is not None:
                self.close_group()
            # limits are checked before anything changes: the partial message keeps what
            # came before the offending fragment, and not the fragment itself
            if self._groups >= limits.max_groups:
                raise LimitExceededError("max_groups", limits.max_groups)
            group_size = size
        else:
            group_size = self._group_size + size
        if self._size + size > limits.max_message_bytes:
            raise LimitExceededError("max_message_bytes", limits.max_message_bytes)
        if kind == "tool_call" and group_size > limits.max_tool_arguments_bytes:
            raise LimitExceededError("max_tool_arguments_bytes", limits.max_tool_arguments_bytes)
        if new_group:
            self._groups += 1
            self._open = item
        self._group_size = group_size
        self._size += size
        self._parts.append(value)
        if item.fidelity is not None:
            fid = self._fidelity
            self._fidelity = {**fid, **item.fidelity} if fid else item.fidelity
        if item.provider is not None:
            self._provider = merge_provider(self._provider, item.provider)
        if self._announced:  # _emit_delta inlined: this runs once per token
            self.out.append(UniEvent("delta", [item], None, None, self.now, None))
        else:
            self._emit_delta(item)

    def text(self, text: str, provider: JSONDict | None = None) -> None:
        """Emit a ``text.delta`` fragment."""
        self.delta(TextItem("text.delta", text, None, provider))

    def thinking(self, thinking: str, fidelity: JSONDict | None = None,
                 provider: JSONDict | None = None) -> None:
        """Emit a ``thinking.delta`` fragment (a signature alone: ``thinking=""`` plus fidelity)."""
        self.delta(ThinkingItem("thinking.delta", thinking, fidelity, provider))

    def tool_call(self, arguments: str, name: str = "", tool_call_id: str = "",
                  provider: JSONDict | None = None, *, new: bool = False) -> None:
        """Emit a ``tool_call.delta``; ``new=True`` starts a new call even after another one."""
        if new and self._open is not None:
            self.close_group()
        self.delta(ToolCallItem("tool_call.delta", name, tool_call_id, arguments, None, provider))

    def close_group(self) -> None:
        """Close the open group with its ``.done`` item (no-op when none is open)."""
        first = self._open
        if first is None:
            return
        done = join_fragments(first, self._parts, done=True)
        done.fidelity = self._fidelity
        done.provider = flag_provider(self._provider)  # unsafe citation URLs: url_flags
        if isinstance(done, ToolCallItem):
            text = str(done.arguments)
            # the joined text stands for the fragments from here on (the partial message
            # is the same if the parse fails): they are freed before the parsed object
            # is built, not after
            self._parts = [text]
            done.arguments = parse_arguments(text, tool_call_id=done.tool_call_id, name=done.name)
        self._items.append(done)
        self._open = None
        self._parts = []
        self._fidelity = None
        self._provider = None
        self._emit_delta(done)

    def keep(self, key: str, value: Any) -> None:
        """Append ``value`` to the message-level list ``provider[key]`` (blocks and events
        UniEvent has no kind for). O(1) per call; each kept entry counts as a group
        against ``max_groups``, so a flood of unknown events cannot grow without bound.
        """
        if self._groups >= self.limits.max_groups:
            raise LimitExceededError("max_groups", self.limits.max_groups)
        self._groups += 1
        kept = self._meta.get(key)
        if isinstance(kept, list):
            kept.append(value)
        else:
            self._meta[key] = [value]

    def _emit_delta(self, item: ContentItem) -> None:
        provider = None
        if not self._announced:
            self._announced = True
            meta: JSONDict = {k: self._meta[k] for k in ("id", "model") if k in self._meta}
            provider = meta or None
        self.out.append(UniEvent("delta", [item], None, None, self.now, provider))

    # -- message level --------------------------------------------------------
    def stop(self, usage: Usage | None, finish_reason: FinishReason,
             provider: JSONDict | None = None) -> None:
        """Close the open group and emit the one ``stop`` event."""
        if self._stopped:
            raise ProtocolError("second stop for one stream")
        self.close_group()
        if provider:
            self._meta.update(provider)
        self._usage = usage if usage is not None else Usage()
        self._finish = finish_reason
        self._stopped = True
        if self._created is None:
            self._created = self.now
        self.out.append(UniEvent("stop", [], self._usage, finish_reason, self.now,
                                 _copy_lists(self._meta)))

    def drain(self) -> list[UniEvent]:
        """Hand over the events written since the last drain."""
        out = self.out
        if out:
            if self._created is None:
                self._created = out[0].created_at
            self.out = []
        return out


@mypyc_attr(allow_interpreted_subclasses=True)  # the other dialects and users subclass it
class Decoder(ABC):
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

    def __init__(self, *, limits: Limits | None = None, clock: Any = None) -> None:
        self.limits = limits or DEFAULT_LIMITS
        self._clock = clock or now_ms
        self.emitter = Emitter(self.limits)

    @property
    def partial(self) -> Message:
        """The message assembled from everything fed so far."""
        return self.emitter.message

    @property
    def stopped(self) -> bool:
        """True once the stop event was emitted."""
        return self.emitter.stopped

    def feed(self, frame: Any) -> list[UniEvent]:
        """Decode one frame into zero or more UniEvents."""
        em = self.emitter
        em.now = self._clock()
        try:
            self.handle(frame)
        except StreamflowError as exc:
            exc.events = em.drain() + exc.events
            raise exc.with_partial(em.message) from exc.__cause__
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                ArithmeticError, RecursionError) as exc:
            err = ProtocolError(f"{self.name}: malformed event ({type(exc).__name__}: {exc})",
                                raw=getattr(frame, "data", None), partial=em.message)
            err.events = em.drain()
            raise err from exc
        return em.drain()

    def close(self) -> list[UniEvent]:
        """End of input: flush what the dialect allows, or raise ``IncompleteStreamError``."""
        em = self.emitter
        em.now = self._clock()
        try:
            self.finish()
        except StreamflowError as exc:
            exc.events = em.drain() + exc.events
            raise exc.with_partial(em.message) from exc.__cause__
        return em.drain()

    def finish(self) -> None:
        """Called at end of input; the default requires that stop was already emitted."""
        if not self.emitter.stopped:
            raise IncompleteStreamError(
                f"{self.name} stream ended without {self.terminator}")

    @abstractmethod
    def handle(self, frame: Any) -> None:
        """Map one frame onto the emitter."""

    @classmethod
    @abstractmethod
    def sniff(cls, frame: Any) -> bool:
        """True if ``frame`` (the first meaningful frame of a body) belongs to this dialect."""
