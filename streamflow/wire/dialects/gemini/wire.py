"""Typed wire models of the Gemini ``streamGenerateContent?alt=sse`` stream.

Each ``data:`` payload is a whole ``GenerateContentResponse`` (camelCase on the
wire; the models use snake_case names with camelCase aliases), or an ``{"error":
{...}}`` object sent in-band. Every model allows extra fields, so a newer part or
candidate field validates and stays available. Used by the ``decode`` operator;
the decoder's hot path reads the same JSON as dicts (see :mod:`streamflow.wire.dialects.base`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter
from pydantic.alias_generators import to_camel

from .._wire_base import WireModel as BaseWireModel
from .._wire_base import frame_data, sse_json, text_of

__all__ = ["WIRE_EVENT", "ErrorResponse", "GenerateContentResponse", "Part", "parse_event"]


class WireModel(BaseWireModel):
    """Base of the Gemini wire models: camelCase aliases, extra fields kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Blob(WireModel):
    """``inlineData``: base64 ``data`` with its MIME type."""

    mime_type: str | None = None
    data: str | None = None


class PartialArg(WireModel):
    """One streamed argument value at a JSON path (``streamFunctionCallArguments``)."""

    json_path: str | None = None
    string_value: str | None = None
    number_value: float | None = None
    bool_value: bool | None = None
    null_value: str | None = None
    will_continue: bool | None = None


class FunctionCall(WireModel):
    """A call, whole (``args``) or streamed (``partialArgs``, ``willContinue``); ``id`` optional."""

    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None
    partial_args: list[PartialArg] | None = None
    will_continue: bool | None = None


class Part(WireModel):
    """One part: text (``thought`` marks reasoning), a call, inline data, or another kind."""

    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    function_call: FunctionCall | None = None
    inline_data: Blob | None = None


class Content(WireModel):
    role: str | None = None
    parts: list[Part] | None = None


class Candidate(WireModel):
    """A candidate; ``finishReason`` arrives on its last chunk."""

    content: Content | None = None
    finish_reason: str | None = None
    finish_message: str | None = None
    index: int | None = None
    safety_ratings: list[dict[str, Any]] | None = None
    citation_metadata: dict[str, Any] | None = None


class UsageMetadata(WireModel):
    """Cumulative usage: the last one of the stream counts."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    thoughts_token_count: int | None = None
    cached_content_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None
    total_token_count: int | None = None


class PromptFeedback(WireModel):
    block_reason: str | None = None
    block_reason_message: str | None = None
    safety_ratings: list[dict[str, Any]] | None = None


class GenerateContentResponse(WireModel):
    """One stream event: a whole response chunk."""

    candidates: list[Candidate] | None = None
    usage_metadata: UsageMetadata | None = None
    prompt_feedback: PromptFeedback | None = None
    model_version: str | None = None
    response_id: str | None = None


class WireError(WireModel):
    code: int | None = None
    message: str | None = None
    status: str | None = None
    details: list[Any] | None = None


class ErrorResponse(WireModel):
    """An in-band error: ``{"error": {"code", "message", "status"}}``."""

    error: WireError


def _pick(value: Any) -> str:
    has_error = "error" in value if isinstance(value, dict) else hasattr(value, "error")
    return "error" if has_error else "response"


WireEvent = Annotated[
    Annotated[ErrorResponse, Tag("error")] | Annotated[GenerateContentResponse, Tag("response")],
    Discriminator(_pick),
]

WIRE_EVENT: TypeAdapter[Any] = TypeAdapter(WireEvent)


def parse_event(data: str | bytes) -> BaseModel:
    """Validate one ``data:`` payload into its typed wire model (``ValidationError`` if bad)."""
    return WIRE_EVENT.validate_json(data)  # type: ignore[no-any-return]


# -- facts of the dialect (Decoder.is_terminator / error_frame / http_error) ----------

def is_terminator(frame: Any) -> bool:
    """A chunk whose candidate carries a ``finishReason`` is the last one."""
    obj = frame_data(frame)
    cands = obj.get("candidates") if type(obj) is dict else None
    return type(cands) is list and any(type(c) is dict and c.get("finishReason") for c in cands)


def error_frame(code: int, type: str | None, message: str) -> bytes:
    """``{"error": {"code", "message", "status"}}`` (``UNAVAILABLE`` by default)."""
    return sse_json({"error": {"code": code, "message": message,
                               "status": type or "UNAVAILABLE"}})


def http_error(payload: Any, headers: Any) -> tuple[str | None, str | None, str | None]:
    """``{"error": {"code", "message", "status"}}``."""
    err = payload.get("error") if type(payload) is dict else None
    if type(err) is dict and "status" in err:
        return text_of(err.get("message")), text_of(err.get("status")), None
    return None, None, None
