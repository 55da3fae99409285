"""Typed wire models of the Anthropic Messages stream (``event:`` + ``data:`` SSE).

Every model allows extra fields (a newer API version may add some) and every union
has a typed fallback (:class:`UnknownEvent`, :class:`UnknownBlock`,
:class:`UnknownDelta`), so :func:`parse_event` never fails on a well-formed event
of a type it does not know. Used by the ``decode`` operator; the decoder's hot
path reads the same JSON as dicts (see :mod:`streamflow.dialects.base`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter


class WireModel(BaseModel):
    """Base of the wire models: extra fields are kept, not rejected."""

    model_config = ConfigDict(extra="allow")


class WireUsage(WireModel):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class WireMessage(WireModel):
    id: str
    type: str = "message"
    role: str = "assistant"
    model: str | None = None
    content: list[Any] = []
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: WireUsage | None = None


class TextBlock(WireModel):
    type: Literal["text"]
    text: str = ""
    citations: list[Any] | None = None


class ThinkingBlock(WireModel):
    type: Literal["thinking"]
    thinking: str = ""
    signature: str | None = None


class RedactedThinkingBlock(WireModel):
    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlock(WireModel):
    type: Literal["tool_use", "server_tool_use"]
    id: str
    name: str
    input: Any = None


class UnknownBlock(WireModel):
    """Any other block: ``*_tool_result`` blocks and types added later."""

    type: str


def _tag(known: tuple[str, ...]) -> Any:
    def pick(value: Any) -> str:
        kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        return kind if kind in known else "unknown"
    return Discriminator(pick)


ContentBlock = Annotated[
    Union[
        Annotated[TextBlock, Tag("text")],
        Annotated[ThinkingBlock, Tag("thinking")],
        Annotated[RedactedThinkingBlock, Tag("redacted_thinking")],
        Annotated[ToolUseBlock, Tag("tool_use")],
        Annotated[ToolUseBlock, Tag("server_tool_use")],
        Annotated[UnknownBlock, Tag("unknown")],
    ],
    _tag(("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use")),
]


class TextDelta(WireModel):
    type: Literal["text_delta"]
    text: str


class ThinkingDelta(WireModel):
    type: Literal["thinking_delta"]
    thinking: str


class SignatureDelta(WireModel):
    type: Literal["signature_delta"]
    signature: str


class InputJSONDelta(WireModel):
    type: Literal["input_json_delta"]
    partial_json: str


class CitationsDelta(WireModel):
    type: Literal["citations_delta"]
    citation: dict[str, Any]


class UnknownDelta(WireModel):
    type: str


Delta = Annotated[
    Union[
        Annotated[TextDelta, Tag("text_delta")],
        Annotated[ThinkingDelta, Tag("thinking_delta")],
        Annotated[SignatureDelta, Tag("signature_delta")],
        Annotated[InputJSONDelta, Tag("input_json_delta")],
        Annotated[CitationsDelta, Tag("citations_delta")],
        Annotated[UnknownDelta, Tag("unknown")],
    ],
    _tag(("text_delta", "thinking_delta", "signature_delta", "input_json_delta",
          "citations_delta")),
]


class MessageStartEvent(WireModel):
    type: Literal["message_start"]
    message: WireMessage


class ContentBlockStartEvent(WireModel):
    type: Literal["content_block_start"]
    index: int
    content_block: ContentBlock


class ContentBlockDeltaEvent(WireModel):
    type: Literal["content_block_delta"]
    index: int
    delta: Delta


class ContentBlockStopEvent(WireModel):
    type: Literal["content_block_stop"]
    index: int


class MessageDeltaBody(WireModel):
    stop_reason: str | None = None
    stop_sequence: str | None = None


class MessageDeltaEvent(WireModel):
    type: Literal["message_delta"]
    delta: MessageDeltaBody
    usage: WireUsage | None = None


class MessageStopEvent(WireModel):
    type: Literal["message_stop"]


class PingEvent(WireModel):
    type: Literal["ping"]


class WireError(WireModel):
    type: str
    message: str


class ErrorEvent(WireModel):
    type: Literal["error"]
    error: WireError
    request_id: str | None = None


class UnknownEvent(WireModel):
    """An event type this version does not know; kept as a typed pass-through."""

    type: str


_EVENT_TYPES = ("message_start", "content_block_start", "content_block_delta",
                "content_block_stop", "message_delta", "message_stop", "ping", "error")

WireEvent = Annotated[
    Union[
        Annotated[MessageStartEvent, Tag("message_start")],
        Annotated[ContentBlockStartEvent, Tag("content_block_start")],
        Annotated[ContentBlockDeltaEvent, Tag("content_block_delta")],
        Annotated[ContentBlockStopEvent, Tag("content_block_stop")],
        Annotated[MessageDeltaEvent, Tag("message_delta")],
        Annotated[MessageStopEvent, Tag("message_stop")],
        Annotated[PingEvent, Tag("ping")],
        Annotated[ErrorEvent, Tag("error")],
        Annotated[UnknownEvent, Tag("unknown")],
    ],
    _tag(_EVENT_TYPES),
]

WIRE_EVENT: TypeAdapter[Any] = TypeAdapter(WireEvent)


def parse_event(data: str | bytes) -> BaseModel:
    """Validate one ``data:`` payload into its typed wire model (``ValidationError`` if bad)."""
    return WIRE_EVENT.validate_json(data)  # type: ignore[no-any-return]
