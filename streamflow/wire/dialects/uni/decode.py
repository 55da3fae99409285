"""Dialect ``uni``: UniEvent itself on the wire, so streamflow can feed streamflow.

Each frame is one UniEvent in its JSON form (:meth:`UniEvent.to_dict`), as SSE
(``data: {...}``, dialect ``uni``, what :class:`~.encode.UniEncoder` writes) or JSON
lines (dialect ``uni-jsonl``, :class:`~.encode.UniJSONLEncoder`; ``dialect="auto"``
recognises both).
A recorded pipeline can thus be served and consumed by another streamflow process
and give the very same events, ``created_at`` and ``provider`` slots included.

The decoder checks everything the producer promised: seed-001 grammar (one item
per delta, ``K.delta+ K.done`` groups that never interleave, a ``.done`` only for
an open group, stop last with usage and a valid finish reason), field types, and
the configured limits. The stop event ends the stream; a body that ends without
it is :class:`IncompleteStreamError`. A stream that failed is recorded as a last
frame ``{"error": {...}}`` (:meth:`StreamflowError.to_dict`, what the encoders
write for an exception) and decodes to the same typed error; an optional
``"provider"`` object beside it is the partial message's provider data that no
event carried (kept server-tool blocks), merged into the error's partial, and an optional
``"usage_metadata"`` the partial's usage so far (beyond the counts a first delta
event's ``provider["usage_so_far"]`` carries, checked like the stop event's usage).
An SSE event of type ``replay`` (what ``from_redis(..., last_event_id=...)`` sends for
the events the reader already has) is checked and assembled into the message but not delivered.
"""

from __future__ import annotations

from typing import Any, ClassVar

import streamflow.core.errors as _errors

from ....core._grammar import DELTA_WITH_ENDING, STOP_WITHOUT_ENDING, items_refusal
from ....core.errors import (
    LimitExceededError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    StreamTimeoutError,
)
from ....core.events import (
    FINISH_REASONS,
    USAGE_SO_FAR,
    ContentItem,
    ToolCallItem,
    Usage,
    event_from_dict,
    is_done,
    join_fragments,
    usage_from_dict,
    usage_so_far,
)
from ....core.partial_json import parse_arguments
from ...framing.sse import ServerSentEvent
from .._readers import error_code, error_text, token_count
from .._wire_base import frame_data, json_line, sse_json
from ..base import Decoder, load_json
from .encode import encode_jsonl, encode_sse, to_json

__all__ = ["UniDecoder", "UniJSONLDecoder", "encode_jsonl", "encode_sse", "error_from_dict",
           "to_json"]

_STRINGS = ("name", "tool_call_id", "mime_type")


def error_from_dict(data: Any) -> StreamflowError:
    """Rebuild the typed error written by :meth:`StreamflowError.to_dict`."""
    if type(data) is not dict:
        return ProviderError(str(data), body=data)
    message = str(data.get("message") or "")
    cls = getattr(_errors, str(data.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, StreamflowError)):
        return ProviderError(message or "error", type=str(data.get("type")), body=data)
    if issubclass(cls, _errors.HTTPStatusError):
        status = data.get("status", data.get("code"))
        return cls(message, status=status if type(status) is int else 0,
                   type=error_text(data.get("error_type")),
                   request_id=error_text(data.get("request_id")), body=data)
    if issubclass(cls, ProviderError):
        return cls(message, code=error_code(data.get("code")),
                   type=error_text(data.get("error_type")),
                   request_id=error_text(data.get("request_id")), body=data)
    if issubclass(cls, LimitExceededError):
        maximum = data.get("maximum")
        return cls(str(data.get("limit")), maximum if isinstance(maximum, int) else 0)
    if issubclass(cls, _errors.ToolCallArgumentParseError):
        return cls(message, tool_call_id=str(data.get("tool_call_id") or ""),
                   name=str(data.get("name") or ""))
    if issubclass(cls, StreamTimeoutError):
        seconds = data.get("seconds")
        err: StreamflowError = cls(str(data.get("kind") or "idle"),
                                   float(seconds) if isinstance(seconds, (int, float)) else 0.0)
        err.message = message
        err.args = (message,)
        return err
    return cls(message)


def _check_item(item: ContentItem) -> None:
    kind = item.kind
    if item.type not in (f"{kind}.delta", f"{kind}.done"):
        raise ProtocolError(f"unknown item type {item.type!r}")
    value = getattr(item, item.growing)
    done = is_done(item)
    if kind == "tool_call":
        ok = isinstance(value, dict) if done else isinstance(value, str)
    elif kind in ("inline_data", "inline_thinking"):
        ok = isinstance(value, bytes)
    elif kind == "embedding":
        ok = isinstance(value, list) and all(
            type(x) in (int, float) for x in value)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise ProtocolError(f"{item.type}.{item.growing} has the wrong type "
                            f"({type(value).__name__})")
    for name in _STRINGS:
        if not isinstance(getattr(item, name, ""), str):
            raise ProtocolError(f"{item.type}.{name} must be a string")
    for slot in (item.fidelity, item.provider):
        if slot is not None and type(slot) is not dict:
            raise ProtocolError(f"{item.type} fidelity/provider must be an object")


def _check_done(done: ContentItem, first: Any, parts: list[Any]) -> None:
    """A ``.done`` must be its group's first fragment with the growing field joined."""
    expected = join_fragments(first, parts, done=True)
    if isinstance(expected, ToolCallItem):
        expected.arguments = parse_arguments(str(expected.arguments),
                                             tool_call_id=expected.tool_call_id,
                                             name=expected.name)
    growing = done.growing
    same = getattr(done, growing) == getattr(expected, growing)
    if isinstance(done, ToolCallItem) and isinstance(expected, ToolCallItem):
        same = same and (done.name, done.tool_call_id) == (expected.name, expected.tool_call_id)
    if not same:
        raise ProtocolError(f"{done.type} does not match its group's fragments")


class UniDecoder(Decoder[ServerSentEvent]):
    """Decoder of UniEvent JSON frames (SSE); passes each event through, validated."""

    name: ClassVar[str] = "uni"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "the stop event"

    @classmethod
    def is_terminator(cls, frame: Any) -> bool:
        """The stop event ends the stream."""
        obj = frame_data(frame)
        return type(obj) is dict and obj.get("event_type") == "stop"

    @classmethod
    def error_frame(cls, code: int, type: str | None, message: str) -> bytes:
        """The ``{"error": {...}}`` frame :func:`to_json` writes for a ``ProviderError``."""
        obj = {"error": {"type": "ProviderError", "message": message, "code": code,
                         "error_type": type or "overloaded_error"}}
        return json_line(obj) if cls.framing == "ndjson" else sse_json(obj)

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A JSON object with ``event_type`` and ``content_items``."""
        data = getattr(frame, "data", "")
        return isinstance(data, str) and data.lstrip().startswith("{") and \
            '"event_type"' in data and '"content_items"' in data

    def handle(self, frame: ServerSentEvent) -> None:
        """Validate one event and pass it on unchanged."""
        obj = load_json(frame.data, "uni event")
        if type(obj) is not dict:
            raise ProtocolError("uni event is not a JSON object", raw=frame.data)
        if "error" in obj and "event_type" not in obj:
            if type(obj.get("provider")) is dict:  # the partial's message-level provider data
                self.emitter.note(obj["provider"])
            if type(obj.get("usage_metadata")) is dict:  # the partial's usage so far
                usage = _usage_so_far(obj["usage_metadata"], frame.data)
                if usage is not None:
                    self.emitter.counted(usage)
            raise error_from_dict(obj["error"])
        if type(obj.get("content_items", [])) is not list:
            raise ProtocolError("content_items must be a list", raw=frame.data)
        try:
            event = event_from_dict(obj)
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            # event_from_dict reads untrusted JSON here: a missing or mistyped field (or
            # a number out of range: created_at 1e999)
            raise ProtocolError(f"not a UniEvent ({type(exc).__name__}: {exc})",
                                raw=frame.data) from None
        if event.provider is not None and type(event.provider) is not dict:
            raise ProtocolError("event provider must be an object", raw=frame.data)
        if event.provider and USAGE_SO_FAR in event.provider:  # the counts so far, checked
            so_far = event.provider[USAGE_SO_FAR]
            if type(so_far) is not dict or usage_so_far(event.provider) is None:
                _usage_so_far(so_far if type(so_far) is dict else None, frame.data)
                raise ProtocolError(f"provider {USAGE_SO_FAR} is not a usage object",
                                    raw=frame.data)
        em = self.emitter
        if event.event_type == "stop":
            if event.content_items:
                raise ProtocolError(items_refusal("stop", 1).message, raw=frame.data)
            if event.finish_reason not in FINISH_REASONS or event.usage_metadata is None:
                raise ProtocolError(STOP_WITHOUT_ENDING, raw=frame.data)
            counts = obj.get("usage_metadata")
            for key in ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens",
                        "cache_write_tokens"):
                token_count(counts, key)
        else:
            if event.finish_reason is not None or event.usage_metadata is not None:
                raise ProtocolError(DELTA_WITH_ENDING, raw=frame.data)
            asm = em.assembler
            for item in event.content_items:
                _check_item(item)
                if is_done(item) and asm.open_kind == item.kind:
                    _check_done(item, asm.open_item, asm.fragments)
        em.forward(event)  # the grammar table and the limits
        if frame.event == "replay":  # an event a resumed reader has: the message only
            em.out.pop()


class UniJSONLDecoder(UniDecoder):
    """The same, one UniEvent JSON object per line."""

    name: ClassVar[str] = "uni-jsonl"
    framing: ClassVar[str] = "ndjson"


def _usage_so_far(data: Any, raw: str) -> Usage | None:
    """The usage of an error entry's partial message, its counters checked."""
    for key in ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens",
                "cache_write_tokens"):
        token_count(data, key)
    try:
        return usage_from_dict(data)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"not a usage object ({exc})", raw=raw) from None
