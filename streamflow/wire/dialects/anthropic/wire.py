"""Typed wire models of the Anthropic Messages stream (``event:`` + ``data:`` SSE).

Every model allows extra fields (a newer API version may add some) and every union
has a typed fallback (:class:`UnknownEvent`, :class:`UnknownBlock`,
:class:`UnknownDelta`), so :func:`parse_event` never fails on a well-formed event
of a type it does not know. Used by the ``decode`` operator; the decoder's hot
path reads the same JSON as dicts (see :mod:`streamflow.wire.dialects.base`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, Tag, TypeAdapter

from .._wire_base import WireModel, frame_data, sse_json, text_of, type_discriminator


class WireUsage(WireModel):
    """Token counts; ``message_delta`` carries cumulative totals (GLM adds extras)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    output_tokens_details: dict[str, Any] | None = None
    server_tool_use: dict[str, Any] | None = None
    service_tier: str | None = None


class WireMessage(WireModel):
    """The message envelope of ``message_start`` (content empty, usage placeholders)."""

    id: str
    type: str = "message"
    role: str = "assistant"
    model: str | None = None
    content: list[Any] = Field(default_factory=list)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: WireUsage | None = None


class TextBlock(WireModel):
    """A ``text`` block; ``citations`` when citations are on."""

    type: Literal["text"]
    text: str = ""
    citations: list[Any] | None = None


class ThinkingBlock(WireModel):
    """A ``thinking`` block; the signature usually follows as a ``signature_delta``."""

    type: Literal["thinking"]
    thinking: str = ""
    signature: str | None = None


class RedactedThinkingBlock(WireModel):
    """Encrypted reasoning, given whole at ``content_block_start``."""

    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlock(WireModel):
    """A client (``tool_use``) or server (``server_tool_use``) tool call."""

    type: Literal["tool_use", "server_tool_use"]
    id: str
    name: str
    input: Any = None


class ServerToolResultBlock(WireModel):
    """The result of a server tool (``web_search_tool_result``, ``*_tool_result``)."""

    type: str
    tool_use_id: str
    content: Any = None


class UnknownBlock(WireModel):
    """Any other block (``container_upload``, types added later)."""

    type: str


def _tag(known: tuple[str, ...]) -> Any:
    return type_discriminator(known, {"_tool_result": "tool_result"}
                              if "tool_result" in known else None)


ContentBlock = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ThinkingBlock, Tag("thinking")]
    | Annotated[RedactedThinkingBlock, Tag("redacted_thinking")]
    | Annotated[ToolUseBlock, Tag("tool_use")]
    | Annotated[ToolUseBlock, Tag("server_tool_use")]
    | Annotated[ServerToolResultBlock, Tag("tool_result")]
    | Annotated[UnknownBlock, Tag("unknown")],
    _tag(("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use",
          "tool_result")),
]


class TextDelta(WireModel):
    """A fragment of a ``text`` block."""

    type: Literal["text_delta"]
    text: str


class ThinkingDelta(WireModel):
    """A fragment of a ``thinking`` block."""

    type: Literal["thinking_delta"]
    thinking: str


class SignatureDelta(WireModel):
    """The signature of a ``thinking`` block (sent back next turn)."""

    type: Literal["signature_delta"]
    signature: str


class InputJSONDelta(WireModel):
    """A fragment of a tool call's JSON input."""

    type: Literal["input_json_delta"]
    partial_json: str


class CitationsDelta(WireModel):
    """One citation attached to the current ``text`` block."""

    type: Literal["citations_delta"]
    citation: dict[str, Any]


class UnknownDelta(WireModel):
    """A delta type this version does not know."""

    type: str


Delta = Annotated[
    Annotated[TextDelta, Tag("text_delta")]
    | Annotated[ThinkingDelta, Tag("thinking_delta")]
    | Annotated[SignatureDelta, Tag("signature_delta")]
    | Annotated[InputJSONDelta, Tag("input_json_delta")]
    | Annotated[CitationsDelta, Tag("citations_delta")]
    | Annotated[UnknownDelta, Tag("unknown")],
    _tag(("text_delta", "thinking_delta", "signature_delta", "input_json_delta",
          "citations_delta")),
]


class MessageStartEvent(WireModel):
    """``message_start``: the envelope of the message."""

    type: Literal["message_start"]
    message: WireMessage


class ContentBlockStartEvent(WireModel):
    """``content_block_start``: opens block ``index``."""

    type: Literal["content_block_start"]
    index: int
    content_block: ContentBlock


class ContentBlockDeltaEvent(WireModel):
    """``content_block_delta``: a fragment of block ``index``."""

    type: Literal["content_block_delta"]
    index: int
    delta: Delta


class ContentBlockStopEvent(WireModel):
    """``content_block_stop``: closes block ``index``."""

    type: Literal["content_block_stop"]
    index: int


class MessageDeltaBody(WireModel):
    """The ``delta`` of ``message_delta``: stop reason and details."""

    stop_reason: str | None = None
    stop_sequence: str | None = None
    stop_details: dict[str, Any] | None = None
    container: dict[str, Any] | None = None


class MessageDeltaEvent(WireModel):
    """``message_delta``: stop reason and cumulative usage (may repeat)."""

    type: Literal["message_delta"]
    delta: MessageDeltaBody
    usage: WireUsage | None = None


class MessageStopEvent(WireModel):
    """``message_stop``: the end of the stream."""

    type: Literal["message_stop"]


class PingEvent(WireModel):
    """``ping``: keep-alive, no content."""

    type: Literal["ping"]


class WireError(WireModel):
    """The error object of an ``error`` event."""

    type: str
    message: str


class ErrorEvent(WireModel):
    """``error``: the provider failed mid-stream (e.g. ``overloaded_error``)."""

    type: Literal["error"]
    error: WireError
    request_id: str | None = None


class UnknownEvent(WireModel):
    """An event type this version does not know; kept as a typed pass-through."""

    type: str


_EVENT_TYPES = ("message_start", "content_block_start", "content_block_delta",
                "content_block_stop", "message_delta", "message_stop", "ping", "error")

WireEvent = Annotated[
    Annotated[MessageStartEvent, Tag("message_start")]
    | Annotated[ContentBlockStartEvent, Tag("content_block_start")]
    | Annotated[ContentBlockDeltaEvent, Tag("content_block_delta")]
    | Annotated[ContentBlockStopEvent, Tag("content_block_stop")]
    | Annotated[MessageDeltaEvent, Tag("message_delta")]
    | Annotated[MessageStopEvent, Tag("message_stop")]
    | Annotated[PingEvent, Tag("ping")]
    | Annotated[ErrorEvent, Tag("error")]
    | Annotated[UnknownEvent, Tag("unknown")],
    _tag(_EVENT_TYPES),
]

WIRE_EVENT: TypeAdapter[Any] = TypeAdapter(WireEvent)


def parse_event(data: str | bytes) -> BaseModel:
    """Validate one ``data:`` payload into its typed wire model (``ValidationError`` if bad)."""
    return WIRE_EVENT.validate_json(data)  # type: ignore[no-any-return]


# -- facts of the dialect (Decoder.is_terminator / error_frame / http_error) ----------

def is_terminator(frame: Any) -> bool:
    """``message_stop`` ends the stream."""
    obj = frame_data(frame)
    return type(obj) is dict and obj.get("type") == "message_stop"


def error_frame(code: int, type: str | None, message: str) -> bytes:
    """An ``error`` event (``overloaded_error`` by default)."""
    return sse_json({"type": "error", "error": {"type": type or "overloaded_error",
                                                "message": message}}, "error")


def http_error(payload: Any, headers: Any) -> tuple[str | None, str | None, str | None]:
    """``{"type": "error", "error": {"type", "message"}, "request_id"}``."""
    if type(payload) is dict and payload.get("type") == "error" \
            and type(payload.get("error")) is dict:
        err = payload["error"]
        return (text_of(err.get("message")), text_of(err.get("type")),
                text_of(payload.get("request_id")))
    return None, None, None
