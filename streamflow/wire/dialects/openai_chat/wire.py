"""Typed wire models of the OpenAI-compatible ``chat.completion.chunk`` stream.

One model per payload shape OpenAI, OpenRouter, DeepSeek, GLM, xAI and other
compatible servers send: a chunk (``choices`` with a ``delta``, a usage-only chunk
with ``choices: []``, an in-band ``error`` chunk) and the ``[DONE]`` terminator
(:class:`DoneMarker`). Every model allows extra fields and every list of tagged
entries (reasoning details, annotations) has a typed fallback, so
:func:`parse_event` never fails on a well-formed chunk carrying something new.
Used by the ``decode`` operator; the decoder's hot path reads the same JSON as
dicts (see :mod:`streamflow.wire.dialects.base`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, Tag, TypeAdapter

from .._wire_base import WireModel, sse_json, text_of, type_discriminator

__all__ = ["WIRE_CHUNK", "ChatCompletionChunk", "DoneMarker", "parse_event"]




class FunctionDelta(WireModel):
    """A fragment of a function call: name on the first fragment, arguments text."""

    name: str | None = None
    arguments: str | None = None


class ToolCallDelta(WireModel):
    """A ``delta.tool_calls`` entry, keyed by ``index`` (fragments of calls may interleave)."""

    index: int | None = None
    id: str | None = None
    type: str | None = None
    function: FunctionDelta | None = None


class ReasoningText(WireModel):
    """``reasoning.text``: repeats ``delta.reasoning``; may carry a ``signature``."""

    type: Literal["reasoning.text"]
    text: str | None = None
    signature: str | None = None
    id: str | None = None
    format: str | None = None
    index: int | None = None


class ReasoningSummary(WireModel):
    """``reasoning.summary``: a summary of the reasoning."""

    type: Literal["reasoning.summary"]
    summary: str | None = None
    id: str | None = None
    format: str | None = None
    index: int | None = None


class ReasoningEncrypted(WireModel):
    """``reasoning.encrypted``: opaque reasoning to send back unchanged."""

    type: Literal["reasoning.encrypted"]
    data: str | None = None
    id: str | None = None
    format: str | None = None
    index: int | None = None


class UnknownDetail(WireModel):
    """A reasoning detail type this version does not know."""

    type: str | None = None


ReasoningDetail = Annotated[
    Annotated[ReasoningText, Tag("reasoning.text")]
    | Annotated[ReasoningSummary, Tag("reasoning.summary")]
    | Annotated[ReasoningEncrypted, Tag("reasoning.encrypted")]
    | Annotated[UnknownDetail, Tag("unknown")],
    type_discriminator(("reasoning.text", "reasoning.summary", "reasoning.encrypted")),
]


class UrlCitation(WireModel):
    url: str
    title: str | None = None
    content: str | None = None
    start_index: int | None = None
    end_index: int | None = None


class UrlCitationAnnotation(WireModel):
    """A ``url_citation`` annotation (web search results)."""

    type: Literal["url_citation"]
    url_citation: UrlCitation


class UnknownAnnotation(WireModel):
    """``file_citation`` and any other annotation type, kept as sent."""

    type: str | None = None


Annotation = Annotated[
    Annotated[UrlCitationAnnotation, Tag("url_citation")]
    | Annotated[UnknownAnnotation, Tag("unknown")],
    type_discriminator(("url_citation",)),
]


class ImageUrl(WireModel):
    url: str


class ImageDelta(WireModel):
    """An image in ``delta.images``: a ``data:`` URL (base64) or a plain URL."""

    index: int | None = None
    type: str | None = None
    image_url: ImageUrl | None = None


class AudioDelta(WireModel):
    """A chunk of ``delta.audio``: base64 ``data`` and a ``transcript`` fragment."""

    id: str | None = None
    data: str | None = None
    transcript: str | None = None
    format: str | None = None
    expires_at: int | None = None


class Artifact(WireModel):
    """An inline file from a hosted tool (``delta.artifacts``)."""

    type: str | None = None
    filename: str | None = None
    media_type: str | None = None
    data: str | None = None


class Delta(WireModel):
    """The fields one chunk adds to a choice's message."""

    role: str | None = None
    content: str | list[Any] | None = None
    refusal: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    reasoning_details: list[ReasoningDetail] | None = None
    tool_calls: list[ToolCallDelta] | None = None
    function_call: FunctionDelta | None = None
    annotations: list[Annotation] | None = None
    images: list[ImageDelta] | None = None
    audio: AudioDelta | None = None
    artifacts: list[Artifact] | None = None


class Logprobs(WireModel):
    content: list[dict[str, Any]] | None = None
    refusal: list[dict[str, Any]] | None = None


class Choice(WireModel):
    """One choice of a chunk; ``finish_reason`` is set on its finish chunk."""

    index: int = 0
    delta: Delta | None = None
    finish_reason: str | None = None
    native_finish_reason: str | None = None
    logprobs: Logprobs | None = None


class PromptTokensDetails(WireModel):
    cached_tokens: int | None = None
    audio_tokens: int | None = None


class CompletionTokensDetails(WireModel):
    reasoning_tokens: int | None = None
    audio_tokens: int | None = None


class WireUsage(WireModel):
    """Token counts; OpenRouter adds ``cost`` and ``cost_details``."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None


class WireError(WireModel):
    """An in-band error: ``code`` (HTTP-like number or string), message, metadata."""

    code: int | str | None = None
    message: str | None = None
    type: str | None = None
    metadata: dict[str, Any] | None = None


class ChatCompletionChunk(WireModel):
    """One ``data:`` payload of the stream."""

    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    system_fingerprint: str | None = None
    service_tier: str | None = None
    provider: str | None = None
    choices: list[Choice] = Field(default_factory=list)
    usage: WireUsage | None = None
    error: WireError | None = None


class DoneMarker(WireModel):
    """The literal ``[DONE]`` payload that ends a stream."""

    type: Literal["done"] = "done"


WIRE_CHUNK: TypeAdapter[ChatCompletionChunk] = TypeAdapter(ChatCompletionChunk)


def parse_event(data: str | bytes) -> BaseModel:
    """Validate one ``data:`` payload: a :class:`ChatCompletionChunk` or :class:`DoneMarker`.

    Raises pydantic's ``ValidationError`` for a payload that is not a chunk.
    """
    text = data.decode() if isinstance(data, (bytes, bytearray)) else data
    if text.strip() == "[DONE]":
        return DoneMarker()
    return WIRE_CHUNK.validate_json(text)


# -- facts of the dialect (Decoder.is_terminator / error_frame / http_error) ----------

def is_terminator(frame: Any) -> bool:
    """``data: [DONE]`` ends the stream."""
    data = getattr(frame, "data", None)
    return isinstance(data, str) and data.strip() == "[DONE]"


def error_frame(code: int, type: str | None, message: str) -> bytes:
    """OpenRouter's mid-stream error chunk (``finish_reason: error``), then ``[DONE]``."""
    chunk = {"id": "gen-fault", "object": "chat.completion.chunk", "created": 0, "model": "",
             "error": {"code": code, "message": message,
                       "metadata": {"error_type": type or "provider_unavailable"}},
             "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}
    return sse_json(chunk) + b"data: [DONE]\n\n"


def http_error(payload: Any, headers: Any) -> tuple[str | None, str | None, str | None]:
    """``{"error": {"message", "type", "code"}}`` (or ``{"error": "text"}``)."""
    if type(payload) is not dict or "error" not in payload:
        return None, None, None
    err = payload["error"]
    if type(err) is dict:
        return (text_of(err.get("message")), text_of(err.get("type")) or text_of(err.get("code")),
                None)
    return text_of(err), None, None
