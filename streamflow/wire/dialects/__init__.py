"""The dialect registry: one folder per dialect (a provider API's protocol), one line each here.

``DIALECTS`` maps a dialect name to ``"module:Class"`` of its :class:`Decoder`;
modules are imported on first use. The order is the order ``dialect="auto"`` asks
each decoder's ``sniff`` about the first frame, most specific first. ``ENCODERS``
maps a target name to its :class:`Encoder` (``encode.py`` beside ``decode.py``);
``vercel-ui`` and ``ag-ui`` are write-only targets. ``REQUESTS`` maps a dialect with
a request side to the :class:`~streamflow.wire.dialects.request_base.RequestSide` its
``request.py`` declares (parser, builder, endpoints, credentials, error envelope);
providers, the gateway (one client route per request side with a ``client_path``), the
CLI and redaction (:func:`credential_headers`, :func:`credential_params`: the one
credential list :mod:`streamflow.wire.redaction` masks with) read them from here.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ...core.errors import DialectDetectionError
from .base import Decoder
from .encoder import Encoder

if TYPE_CHECKING:
    from .request_base import RequestSide

__all__ = ["DIALECTS", "ENCODERS", "REQUESTS", "Decoder", "Encoder", "credential_headers",
           "credential_params", "detect_dialect", "dialect_names", "encoder_names", "get_dialect",
           "get_encoder", "get_request", "request_names"]

DIALECTS: dict[str, str] = {
    "anthropic": "streamflow.wire.dialects.anthropic.decode:AnthropicDecoder",
    "openai-responses": "streamflow.wire.dialects.openai_responses.decode:OpenAIResponsesDecoder",
    "gemini": "streamflow.wire.dialects.gemini.decode:GeminiDecoder",
    "openai-chat": "streamflow.wire.dialects.openai_chat.decode:OpenAIChatDecoder",
    "bedrock": "streamflow.wire.dialects.bedrock.decode:BedrockDecoder",
    "bedrock-invoke": "streamflow.wire.dialects.bedrock_invoke.decode:BedrockInvokeDecoder",
    "ollama": "streamflow.wire.dialects.ollama.decode:OllamaDecoder",
    "openrouter-image": "streamflow.wire.dialects.openrouter_media.decode:OpenRouterImageDecoder",
    "speech": "streamflow.wire.dialects.openrouter_media.decode:SpeechDecoder",
    "openai-embeddings": "streamflow.wire.dialects.embeddings.decode:EmbeddingsDecoder",
    "uni": "streamflow.wire.dialects.uni.decode:UniDecoder",
    "uni-jsonl": "streamflow.wire.dialects.uni.decode:UniJSONLDecoder",
}

ENCODERS: dict[str, str] = {
    "anthropic": "streamflow.wire.dialects.anthropic.encode:AnthropicEncoder",
    "openai-chat": "streamflow.wire.dialects.openai_chat.encode:OpenAIChatEncoder",
    "openai-responses": "streamflow.wire.dialects.openai_responses.encode:OpenAIResponsesEncoder",
    "gemini": "streamflow.wire.dialects.gemini.encode:GeminiEncoder",
    "ollama": "streamflow.wire.dialects.ollama.encode:OllamaEncoder",
    "uni": "streamflow.wire.dialects.uni.encode:UniEncoder",
    "uni-jsonl": "streamflow.wire.dialects.uni.encode:UniJSONLEncoder",
    "vercel-ui": "streamflow.wire.targets.vercel_ui.encode:VercelUIEncoder",
    "ag-ui": "streamflow.wire.targets.ag_ui.encode:AGUIEncoder",
}

REQUESTS: dict[str, str] = {
    "anthropic": "streamflow.wire.dialects.anthropic.request:REQUEST",
    "openai-chat": "streamflow.wire.dialects.openai_chat.request:REQUEST",
    "openai-responses": "streamflow.wire.dialects.openai_responses.request:REQUEST",
    "gemini": "streamflow.wire.dialects.gemini.request:REQUEST",
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


def request_names() -> list[str]:
    """Dialects with a request side (upstreams the gateway and providers can speak)."""
    return list(REQUESTS)


def get_request(name: str) -> RequestSide:
    """The request side of dialect ``name``; ``ValueError`` for one without."""
    found: RequestSide = _load(REQUESTS, "dialect with a request side", name)
    return found


def credential_headers() -> frozenset[str]:
    """Every header that carries a credential: the one list redaction and the gateway use."""
    from .request_base import BASE_CREDENTIALS
    return frozenset(BASE_CREDENTIALS) | {get_request(n).credential for n in REQUESTS}


def credential_params() -> frozenset[str]:
    """Every query parameter that carries a credential (lowercase): Gemini's ``key`` and
    the rest of the request sides' ``credential_param``, plus ``BASE_CREDENTIAL_PARAMS``.
    With :func:`credential_headers`, the one list :mod:`streamflow.wire.redaction` uses."""
    from .request_base import BASE_CREDENTIAL_PARAMS
    sides = (get_request(n).credential_param for n in REQUESTS)
    return frozenset(BASE_CREDENTIAL_PARAMS) | {p.lower() for p in sides if p}


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
