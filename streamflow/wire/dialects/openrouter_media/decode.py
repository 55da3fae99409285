"""Dialects ``openrouter-image`` (image generation SSE) and ``speech`` (raw audio bytes).

``openrouter-image`` reads ``POST /images`` with ``stream: true``: data-only SSE
frames whose JSON ``type`` is ``image_generation.partial`` / ``.completed`` /
``.usage`` / ``.error``, ended by ``data: [DONE]``. Every image -- each progress
preview and each final image -- is an ``inline_data`` group of its own (one
``inline_data.delta`` with the decoded ``b64_json`` bytes and ``media_type``, then
its ``.done``). The item's ``provider`` tells them apart: ``{"partial": true,
"index": i}`` on a preview, ``{"partial": false, "index": i}`` on the final image
(``index`` is the image's number when ``n`` > 1), plus any other field of the frame.
So ``[i for i in message.items if not i.provider["partial"]]`` are the results.
``image_generation.usage`` -> the stop event's usage (``prompt_tokens``,
``completion_tokens`` -> ``response_tokens``, ``cost``; the raw object in
``usage_metadata.provider``); the stop is emitted at ``[DONE]`` with finish reason
``stop``. ``image_generation.error`` -> :class:`ProviderError` with ``code`` the
HTTP ``status`` and ``type`` the error's ``code`` (``provider_unavailable``...).
No ``[DONE]`` -> :class:`IncompleteStreamError`.

``speech`` reads ``POST /audio/speech``: no SSE, the body is the audio itself
(framing ``raw``). Each chunk becomes one ``inline_data.delta`` of a single group
with the decoder option ``mime_type`` (the response ``Content-Type``; default
``audio/mpeg``): ``StreamDecoder("speech", mime_type="audio/wav")``. The body
has no terminator and no usage, so the stop comes at :meth:`close` with finish
reason ``stop`` and unknown usage; a cut transfer can only be seen by the
transport (or ``GET /generation``). Raw audio cannot be auto-detected: choose
the dialect explicitly. An empty body is :class:`IncompleteStreamError`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....core.errors import IncompleteStreamError, ProtocolError, ProviderError
from ....core.events import InlineDataItem, JSONDict, Usage
from ...framing.sse import ServerSentEvent
from .._readers import b64_field, error_code, error_text, expect_str, token_count
from .._wire_base import sse_json
from ..base import Decoder, load_json
from ..openai_chat import wire as chat_wire

__all__ = ["OpenRouterImageDecoder", "SpeechDecoder", "image_usage"]

_IMAGE_KEYS = ("type", "b64_json", "media_type")


def image_usage(raw: JSONDict) -> Usage:
    """Map an image-generation usage object onto :class:`Usage` (raw kept in ``provider``)."""
    cost = raw.get("cost")
    details = raw.get("prompt_tokens_details")
    return Usage(cached_tokens=token_count(details, "cached_tokens")
                 if isinstance(details, dict) else None,
                 prompt_tokens=token_count(raw, "prompt_tokens"), thoughts_tokens=None,
                 response_tokens=token_count(raw, "completion_tokens"),
                 cost=float(cost) if isinstance(cost, (int, float)) else None, provider=raw)


class OpenRouterImageDecoder(Decoder[ServerSentEvent]):
    """Sans-IO decoder of OpenRouter image-generation streams (see module doc)."""

    name: ClassVar[str] = "openrouter-image"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "[DONE]"
    provider_name: ClassVar[str] = "openrouter"
    is_terminator = staticmethod(chat_wire.is_terminator)

    @classmethod
    def error_frame(cls, code: int, type: str | None, message: str) -> bytes:
        """An ``image_generation.error`` event, then ``[DONE]``."""
        return sse_json({"type": "image_generation.error",
                         "error": {"code": type or "provider_unavailable", "message": message,
                                   "status": code}}) + b"data: [DONE]\n\n"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._usage: Usage | None = None

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A frame whose JSON ``type`` starts with ``image_generation.``."""
        data = getattr(frame, "data", "")
        return isinstance(data, str) and '"image_generation.' in data[:200] and \
            data.lstrip().startswith("{")

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one frame."""
        em = self.emitter
        if frame.data.strip() == "[DONE]":
            if em.stopped:
                raise ProtocolError("second [DONE]")
            em.stop(self._usage, "stop")
            return
        ev = load_json(frame.data, "image_generation event")
        if type(ev) is not dict:
            raise ProtocolError("image_generation event is not a JSON object", raw=frame.data)
        kind = ev.get("type")
        if kind == "image_generation.error":
            err = ev.get("error") or {}
            if type(err) is not dict:
                err = {"message": err}
            status = err.get("status")
            raise ProviderError(str(err.get("message") or err.get("code") or "image error"),
                                code=error_code(status) or error_code(err.get("code")),
                                type=error_text(err.get("code")),
                                body=ev)
        if em.stopped:
            raise ProtocolError(f"{kind!r} after [DONE]", raw=frame.data)
        if kind in ("image_generation.partial", "image_generation.completed"):
            data = b64_field(ev.get("b64_json"), "b64_json")
            provider = {k: v for k, v in ev.items() if k not in _IMAGE_KEYS}
            provider["partial"] = kind == "image_generation.partial"
            em.delta(InlineDataItem("inline_data.delta", data,
                                    expect_str(ev.get("media_type"), "media_type"),
                                    None, provider))
            em.close_group()
        elif kind == "image_generation.usage":
            usage = ev.get("usage")
            if type(usage) is not dict:
                raise ProtocolError("image_generation.usage without a usage object",
                                    raw=frame.data)
            self._usage = image_usage(usage)
            extra = {k: v for k, v in ev.items() if k not in ("type", "usage")}
            if extra:
                em.note(extra)
        else:
            em.keep("unknown_events", ev)


class SpeechDecoder(Decoder[bytes]):
    """Raw audio body -> ``inline_data`` deltas of one group; stop at close (see module doc)."""

    name: ClassVar[str] = "speech"
    framing: ClassVar[str] = "raw"
    terminator: ClassVar[str] = "any audio"

    def __init__(self, *, mime_type: str = "audio/mpeg", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mime_type = mime_type

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """Never: raw audio carries no marker to recognise (choose ``speech`` explicitly)."""
        return False

    def handle(self, frame: bytes) -> None:
        """One chunk of audio."""
        if not isinstance(frame, (bytes, bytearray)):
            raise ProtocolError(f"speech frames are bytes, got {type(frame).__name__}")
        if frame:
            if self.emitter.stopped:
                raise ProtocolError("audio after the stream stopped")
            self.emitter.delta(InlineDataItem("inline_data.delta", bytes(frame), self.mime_type))

    def finish(self) -> None:
        """End of body: the audio is complete as far as the body can tell."""
        em = self.emitter
        if em.stopped:
            return
        if em.open_kind is None:
            raise IncompleteStreamError("speech stream ended without any audio")
        em.stop(None, "stop")
