"""Request formats: a parser and a builder per API, one line each in :data:`FORMATS`.

``parse_request("anthropic", body)`` reads a request body into the neutral
:class:`~streamflow.providers.request.ChatRequest`; ``build_request("gemini", req)``
writes one. Gemini is written only (an upstream), the others both ways.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ..request import ChatRequest

__all__ = ["FORMATS", "build_request", "parse_request"]

FORMATS: dict[str, str] = {
    "anthropic": "streamflow.providers.formats.anthropic",
    "openai-chat": "streamflow.providers.formats.openai_chat",
    "openai-responses": "streamflow.providers.formats.openai_responses",
    "gemini": "streamflow.providers.formats.gemini",
}


def _module(name: str) -> Any:
    try:
        return import_module(FORMATS[name])
    except KeyError:
        raise ValueError(f"unknown request format {name!r}; known: {', '.join(FORMATS)}") \
            from None


def parse_request(name: str, body: Any) -> ChatRequest:
    """``body`` (a decoded JSON request of format ``name``) as a neutral request.

    Raises :class:`~streamflow.errors.ProtocolError` for a body that is not a valid
    request of that format.
    """
    module = _module(name)
    if not hasattr(module, "parse"):
        raise ValueError(f"request format {name!r} is written only, not read")
    request: ChatRequest = module.parse(body)
    return request


def build_request(name: str, request: ChatRequest) -> dict[str, Any]:
    """The JSON body of ``request`` in format ``name``."""
    body: dict[str, Any] = _module(name).build(request)
    return body
