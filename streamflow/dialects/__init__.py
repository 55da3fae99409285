"""The dialect registry: one module per provider wire format, one line each here.

``DIALECTS`` maps a dialect name to ``"module:Class"`` of its :class:`Decoder`;
modules are imported on first use. The order is the order ``dialect="auto"`` asks
each decoder's ``sniff`` about the first frame, most specific first.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ..errors import DialectDetectionError
from .base import Decoder

__all__ = ["DIALECTS", "get_dialect", "detect_dialect", "dialect_names", "Decoder"]

DIALECTS: dict[str, str] = {
    "anthropic": "streamflow.dialects.anthropic:AnthropicDecoder",
    "openai-responses": "streamflow.dialects.openai_responses:OpenAIResponsesDecoder",
    "gemini": "streamflow.dialects.gemini:GeminiDecoder",
    "openai-chat": "streamflow.dialects.openai_chat:OpenAIChatDecoder",
    "bedrock": "streamflow.dialects.bedrock:BedrockDecoder",
    "bedrock-invoke": "streamflow.dialects.bedrock_invoke:BedrockInvokeDecoder",
    "ollama": "streamflow.dialects.ollama:OllamaDecoder",
    "openrouter-image": "streamflow.dialects.openrouter_media:OpenRouterImageDecoder",
    "speech": "streamflow.dialects.openrouter_media:SpeechDecoder",
    "openai-embeddings": "streamflow.dialects.embeddings:EmbeddingsDecoder",
    "uni": "streamflow.dialects.uni:UniDecoder",
    "uni-jsonl": "streamflow.dialects.uni:UniJSONLDecoder",
}

_loaded: dict[str, type[Decoder]] = {}


def dialect_names() -> list[str]:
    """Registered dialect names, in sniffing order."""
    return list(DIALECTS)


def get_dialect(name: str) -> type[Decoder]:
    """The decoder class registered as ``name``; ``ValueError`` for an unknown name."""
    cls = _loaded.get(name)
    if cls is None:
        try:
            target = DIALECTS[name]
        except KeyError:
            raise ValueError(
                f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}") from None
        module, _, attr = target.partition(":")
        cls = _loaded[name] = getattr(import_module(module), attr)
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
