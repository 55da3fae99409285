"""Request builders, one module per provider API, one line each in :data:`PROVIDERS`.

A provider builds the streaming HTTP request and the next turn's messages (see
:mod:`streamflow.app.providers.base`); its ``dialect`` names the decoder of its answer and
the request side (``streamflow.wire.dialects.get_request``) its URL and headers come from.
The neutral request model the gateway translates through is
:mod:`streamflow.core.requests`.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .base import HTTPRequest, Provider

__all__ = ["PROVIDERS", "HTTPRequest", "Provider", "make_provider", "provider_class"]

PROVIDERS: dict[str, str] = {
    "anthropic": "streamflow.app.providers.anthropic:AnthropicProvider",
    "openai-chat": "streamflow.app.providers.openai_chat:OpenAIChatProvider",
}


def provider_class(name: str) -> type[Provider]:
    """The provider class registered as ``name`` (``ValueError`` for an unknown one)."""
    try:
        module, _, attr = PROVIDERS[name].partition(":")
    except KeyError:
        raise ValueError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}") from None
    cls: type[Provider] = getattr(import_module(module), attr)
    return cls


def make_provider(name: str, **options: Any) -> Provider:
    """A provider instance (``model``, ``api_key``, ``base_url``... as keyword options)."""
    return provider_class(name)(**options)
