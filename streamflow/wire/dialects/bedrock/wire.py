"""Typed wire models of Amazon Bedrock streams (AWS event-stream messages, JSON payloads).

``ConverseStream`` sends one event per message, named by the ``:event-type``
header; ``InvokeModelWithResponseStream`` sends ``chunk`` events whose ``bytes``
is base64 of the model's native event. Every payload also carries a ``p`` field of
random padding (against traffic-length analysis), which the models ignore.
Every model allows extra fields. Used by the ``decode`` operator; the decoder's hot
path reads the same JSON as dicts (see :mod:`streamflow.wire.dialects.base`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, TypeAdapter

from ...framing.eventstream import EventStreamMessage, encode_message
from .._wire_base import WireModel, text_of

__all__ = ["WIRE_EVENTS", "WireModel", "parse_event"]


class MessageStartEvent(WireModel):
    role: str = "assistant"


class ToolUseBlockStart(WireModel):
    toolUseId: str
    name: str
    type: str | None = None


class ContentBlockStart(WireModel):
    toolUse: ToolUseBlockStart | None = None
    toolResult: dict[str, Any] | None = None
    image: dict[str, Any] | None = None


class ContentBlockStartEvent(WireModel):
    start: ContentBlockStart
    contentBlockIndex: int


class ToolUseBlockDelta(WireModel):
    input: str


class ReasoningContentBlockDelta(WireModel):
    text: str | None = None
    signature: str | None = None
    redactedContent: str | None = None  # base64


class ContentBlockDelta(WireModel):
    text: str | None = None
    toolUse: ToolUseBlockDelta | None = None
    reasoningContent: ReasoningContentBlockDelta | None = None
    citation: dict[str, Any] | None = None
    image: dict[str, Any] | None = None
    toolResult: list[Any] | None = None


class ContentBlockDeltaEvent(WireModel):
    delta: ContentBlockDelta
    contentBlockIndex: int


class ContentBlockStopEvent(WireModel):
    contentBlockIndex: int


class MessageStopEvent(WireModel):
    stopReason: str
    additionalModelResponseFields: Any = None


class TokenUsage(WireModel):
    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: int | None = None
    cacheWriteInputTokens: int | None = None


class StreamMetrics(WireModel):
    latencyMs: int


class MetadataEvent(WireModel):
    usage: TokenUsage
    metrics: StreamMetrics | None = None
    trace: Any = None
    performanceConfig: Any = None
    serviceTier: Any = None


class PayloadPart(WireModel):
    """An InvokeModelWithResponseStream ``chunk``: base64 of the native model event."""

    bytes: str


class ExceptionEvent(WireModel):
    """The payload of a ``:message-type: exception`` message."""

    message: str | None = None
    originalStatusCode: int | None = None
    originalMessage: str | None = None


class UnknownEvent(WireModel):
    """An event type this version does not know."""


WIRE_EVENTS: dict[str, type[WireModel]] = {
    "messageStart": MessageStartEvent,
    "contentBlockStart": ContentBlockStartEvent,
    "contentBlockDelta": ContentBlockDeltaEvent,
    "contentBlockStop": ContentBlockStopEvent,
    "messageStop": MessageStopEvent,
    "metadata": MetadataEvent,
    "chunk": PayloadPart,
}

_ADAPTERS: dict[str, TypeAdapter[Any]] = {k: TypeAdapter(v) for k, v in WIRE_EVENTS.items()}


def parse_event(frame: EventStreamMessage) -> BaseModel:
    """Validate one event-stream message into its typed wire model (by ``:event-type``).

    Exception messages give :class:`ExceptionEvent`; unknown event types give
    :class:`UnknownEvent`. Raises ``ValidationError`` for a payload of the wrong shape.
    """
    if frame.message_type in ("exception", "error"):
        return ExceptionEvent.model_validate_json(frame.payload or b"{}")
    adapter = _ADAPTERS.get(frame.event_type or "")
    if adapter is None:
        return UnknownEvent.model_validate_json(frame.payload or b"{}")
    return adapter.validate_json(frame.payload)  # type: ignore[no-any-return]


# -- facts of the dialect (Decoder.is_terminator / error_frame / http_error) ----------

def is_terminator(frame: Any) -> bool:
    """``messageStop`` ends the content (``metadata`` with the usage follows it)."""
    return isinstance(frame, EventStreamMessage) and frame.event_type == "messageStop"


def error_frame(code: int, type: str | None, message: str) -> bytes:
    """An ``exception`` message (``throttlingException`` by default)."""
    body = json.dumps({"message": message, "originalStatusCode": code}).encode()
    kind = type or "ThrottlingException"
    return encode_message({":message-type": "exception",
                           ":exception-type": kind[:1].lower() + kind[1:],
                           ":content-type": "application/json"}, body)


def http_error(payload: Any, headers: Any) -> tuple[str | None, str | None, str | None]:
    """``{"message"}`` with the type in ``x-amzn-errortype`` (or ``__type``)."""
    amzn = headers.get("x-amzn-errortype") if headers is not None else None
    if type(payload) is dict:
        message = text_of(payload.get("message")) or text_of(payload.get("Message"))
        kind = text_of(payload.get("__type"))
    else:
        message = kind = None
    if amzn and not kind:
        kind = amzn.split(":", 1)[0]
    if message is None and kind is None:
        return None, None, None
    return message, kind, headers.get("x-amzn-requestid") if headers is not None else None
