"""The dialect registry: one folder per provider wire format, one line each here.

``DIALECTS`` maps a dialect name to ``"module:Class"`` of its :class:`Decoder`;
modules are imported on first use. The order is the order ``dialect="auto"`` asks
each decoder's ``sniff`` about the first frame, most specific first. ``ENCODERS``
maps a target name to its :class:`Encoder` (``encode.py`` beside ``decode.py``);
``vercel-ui`` and ``ag-ui`` are write-only targets.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ..errors import DialectDetectionError
from .base import Decoder
from .encoder import Encoder

__all__ = ["DIALECTS", "ENCODERS", "Decoder", "Encoder", "detect_dialect", "dialect_names",
           "encoder_names", "get_dialect", "get_encoder"]

DIALECTS: dict[str, str] = {
    "anthropic": "streamflow.dialects.anthropic.decode:AnthropicDecoder",
    "openai-responses": "streamflow.dialects.openai_responses.decode:OpenAIResponsesDecoder",
    "gemini": "streamflow.dialects.gemini.decode:GeminiDecoder",
    "openai-chat": "streamflow.dialects.openai_chat.decode:OpenAIChatDecoder",
    "bedrock": "streamflow.dialects.bedrock.decode:BedrockDecoder",
    "bedrock-invoke": "streamflow.dialects.bedrock_invoke.decode:BedrockInvokeDecoder",
    "ollama": "streamflow.dialects.ollama.decode:OllamaDecoder",
    "openrouter-image": "streamflow.dialects.openrouter_media.decode:OpenRouterImageDecoder",
    "speech": "streamflow.dialects.openrouter_media.decode:SpeechDecoder",
    "openai-embeddings": "streamflow.dialects.embeddings.decode:EmbeddingsDecoder",
    "uni": "streamflow.dialects.uni.decode:UniDecoder",
    "uni-jsonl": "streamflow.dialects.uni.decode:UniJSONLDecoder",
}

ENCODERS: dict[str, str] = {
    "anthropic": "streamflow.dialects.anthropic.encode:AnthropicEncoder",
    "openai-chat": "streamflow.dialects.openai_chat.encode:OpenAIChatEncoder",
    "openai-responses": "streamflow.dialects.openai_responses.encode:OpenAIResponsesEncoder",
    "gemini": "streamflow.dialects.gemini.encode:GeminiEncoder",
    "ollama": "streamflow.dialects.ollama.encode:OllamaEncoder",
    "uni": "streamflow.dialects.uni.encode:UniEncoder",
    "uni-jsonl": "streamflow.dialects.uni.encode:UniJSONLEncoder",
    "vercel-ui": "streamflow.dialects.vercel_ui.encode:VercelUIEncoder",
    "ag-ui": "streamflow.dialects.ag_ui.encode:AGUIEncoder",
}

_loaded: dict[str, type[Decoder]] = {}
_loaded_encoders: dict[str, type[Encoder]] = {}


def _load(registry: dict[str, str], kind: str, name: str) -> Any:
    try:
        target = registry[name]
    except KeyError:
        raise ValueError(
            f"unknown {kind} {name!r}; known: {', '.join(registry)}") from None
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)


def dialect_names() -> list[str]:
    """Registered dialect names, in sniffing order."""
    return list(DIALECTS)


def get_dialect(name: str) -> type[Decoder]:
    """The decoder class registered as ``name``; ``ValueError`` for an unknown name."""
    cls = _loaded.get(name)
    if cls is None:
        cls = _loaded[name] = _load(DIALECTS, "dialect", name)
    return cls


def encoder_names() -> list[str]:
    """Registered encoder target names."""
    return list(ENCODERS)


def get_encoder(name: str) -> type[Encoder]:
    """The encoder class registered as ``name``; ``ValueError`` for an unknown name."""
    cls = _loaded_encoders.get(name)
    if cls is None:
        cls = _loaded_encoders[name] = _load(ENCODERS, "encoder target", name)
    return cls


def detect_dialect(frame: Any, framing: str) -> str | None:
    """The first registered dialect of ``framing`` whose ``sniff`` accepts ``frame``.

    NDJSON frames are data-only SSE events, so ``sse`` dialects are asked too when
    ``framing`` is ``"ndjson"`` (a ``.jsonl`` recording of an SSE stream).
    """
    accepted = (framing, "sse") if framing == "ndjson" else (framing,)
    for name in DIALECTS:
        cls = get_dialect(name)
        if cls.framing in accepted and cls.sniff(frame):
            return name
    return None


def require_dialect(frame: Any, framing: str) -> str:
    """Like :func:`detect_dialect`, but raise ``DialectDetectionError`` when nothing matches."""
    name = detect_dialect(frame, framing)
    if name is None:
        raw = getattr(frame, "data", frame)
        raise DialectDetectionError(
            f"cannot detect the dialect of a {framing} body from {str(raw)[:80]!r}", raw=raw)
    return name
