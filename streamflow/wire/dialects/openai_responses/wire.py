"""Typed wire models of the OpenAI Responses stream (``event:`` + ``data:`` SSE).

Every model allows extra fields (the API adds some often) and fields the server may
omit (``sequence_number``, ``output_index``, ``content_index``) are optional, so
:func:`parse_event` validates what real servers send; any event type it does not
know becomes a typed :class:`UnknownEvent`. Used by the ``decode`` operator; the
decoder's hot path reads the same JSON as dicts (see :mod:`streamflow.wire.dialects.base`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Tag, TypeAdapter

from .._wire_base import WireModel, frame_data, sse_json

__all__ = ["WIRE_EVENT", "UnknownEvent", "WireResponse", "WireUsage", "parse_event"]


class WireUsage(WireModel):
    """``response.usage``: reasoning tokens are part of ``output_tokens``."""

    input_tokens: int | None = None
    input_tokens_details: dict[str, Any] | None = None
    output_tokens: int | None = None
    output_tokens_details: dict[str, Any] | None = None
    total_tokens: int | None = None


class WireError(WireModel):
    """The error object of ``response.failed`` (``response.error``) and of ``error``."""

    code: str | None = None
    message: str | None = None
    type: str | None = None
    param: str | None = None


class WireResponse(WireModel):
    """The response object carried by the lifecycle events."""

    id: str | None = None
    object: str | None = None
    created_at: float | None = None
    status: str | None = None
    model: str | None = None
    output: list[dict[str, Any]] | None = None
    usage: WireUsage | None = None
    error: WireError | None = None
    incomplete_details: dict[str, Any] | None = None


class _Seq(WireModel):
    sequence_number: int | None = None


class LifecycleEvent(_Seq):
    """``response.created``/``queued``/``in_progress``/``completed``/``incomplete``/``failed``."""

    type: Literal["response.created", "response.queued", "response.in_progress",
                  "response.completed", "response.incomplete", "response.failed"]
    response: WireResponse


class OutputItemEvent(_Seq):
    """``response.output_item.added`` / ``.done``: the item (message, function_call...)."""

    type: Literal["response.output_item.added", "response.output_item.done"]
    output_index: int | None = None
    item: dict[str, Any]


class ContentPartEvent(_Seq):
    """``response.content_part.added``/``.done`` and ``reasoning_summary_part.*``."""

    type: Literal["response.content_part.added", "response.content_part.done",
                  "response.reasoning_summary_part.added",
                  "response.reasoning_summary_part.done"]
    item_id: str | None = None
    output_index: int | None = None
    content_index: int | None = None
    summary_index: int | None = None
    part: dict[str, Any]


class DeltaEvent(_Seq):
    """A text-like fragment: output text, refusal, arguments, custom input, reasoning."""

    type: Literal["response.output_text.delta", "response.refusal.delta",
                  "response.function_call_arguments.delta",
                  "response.custom_tool_call_input.delta",
                  "response.reasoning_summary_text.delta", "response.reasoning_text.delta"]
    item_id: str | None = None
    output_index: int | None = None
    content_index: int | None = None
    summary_index: int | None = None
    delta: str
    logprobs: list[Any] | None = None


class DoneEvent(_Seq):
    """The whole value of a streamed fragment sequence (``text``/``refusal``/``arguments``...)."""

    type: Literal["response.output_text.done", "response.refusal.done",
                  "response.function_call_arguments.done",
                  "response.custom_tool_call_input.done",
                  "response.reasoning_summary_text.done", "response.reasoning_text.done"]
    item_id: str | None = None
    output_index: int | None = None
    content_index: int | None = None
    summary_index: int | None = None
    text: str | None = None
    refusal: str | None = None
    arguments: str | None = None
    input: str | None = None


class AnnotationAddedEvent(_Seq):
    """``response.output_text.annotation.added``: a citation on the output text."""

    type: Literal["response.output_text.annotation.added"]
    item_id: str | None = None
    output_index: int | None = None
    content_index: int | None = None
    annotation_index: int | None = None
    annotation: dict[str, Any] | None = None


class ErrorEvent(_Seq):
    """``error``: flat ``code``/``message``/``param`` (or, on some servers, an ``error`` object)."""

    type: Literal["error"]
    code: str | None = None
    message: str | None = None
    param: str | None = None
    error: WireError | None = None


class UnknownEvent(WireModel):
    """An event type this version does not map (server-tool progress, newer events)."""

    type: str


_KNOWN: dict[str, str] = {}
for _model, _tag_name in ((LifecycleEvent, "lifecycle"), (OutputItemEvent, "output_item"),
                          (ContentPartEvent, "part"), (DeltaEvent, "delta"),
                          (DoneEvent, "done"), (AnnotationAddedEvent, "annotation"),
                          (ErrorEvent, "error")):
    for _literal in _model.model_fields["type"].annotation.__args__:  # type: ignore[union-attr]
        _KNOWN[_literal] = _tag_name


def _pick(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return _KNOWN.get(kind, "unknown") if isinstance(kind, str) else "unknown"


WireEvent = Annotated[
    Annotated[LifecycleEvent, Tag("lifecycle")]
    | Annotated[OutputItemEvent, Tag("output_item")]
    | Annotated[ContentPartEvent, Tag("part")]
    | Annotated[DeltaEvent, Tag("delta")]
    | Annotated[DoneEvent, Tag("done")]
    | Annotated[AnnotationAddedEvent, Tag("annotation")]
    | Annotated[ErrorEvent, Tag("error")]
    | Annotated[UnknownEvent, Tag("unknown")],
    Discriminator(_pick),
]

WIRE_EVENT: TypeAdapter[Any] = TypeAdapter(WireEvent)


def parse_event(data: str | bytes) -> BaseModel:
    """Validate one ``data:`` payload into its typed wire model (``ValidationError`` if bad)."""
    return WIRE_EVENT.validate_json(data)  # type: ignore[no-any-return]


# -- facts of the dialect (Decoder.is_terminator / error_frame / http_error) ----------

def is_terminator(frame: Any) -> bool:
    """``response.completed`` (or ``response.incomplete``) ends the stream."""
    obj = frame_data(frame)
    return type(obj) is dict and obj.get("type") in ("response.completed", "response.incomplete")


def error_frame(code: int, type: str | None, message: str) -> bytes:
    """A flat ``error`` event (``server_error`` by default)."""
    return sse_json({"type": "error", "code": type or "server_error", "message": message,
                     "param": None, "sequence_number": 999_999}, "error")
