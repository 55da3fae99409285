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

__all__ = ["ALIASES", "PROVIDERS", "HTTPRequest", "Provider", "make_provider", "provider_for",
           "provider_class"]

PROVIDERS: dict[str, str] = {
    "anthropic": "streamflow.app.providers.anthropic:AnthropicProvider",
    "openai-chat": "streamflow.app.providers.openai_chat:OpenAIChatProvider",
}


ALIASES: dict[str, str] = {"openai": "openai-chat"}
"""Other names a model string may give a provider by (``"openai:gpt-4.1"``)."""


def provider_for(spec: str, **options: Any) -> Provider:
    """The provider a model string names: ``"anthropic:claude-sonnet-4-5"``,
    ``"openai:gpt-4.1"`` (the provider before the first colon, the model after it, as
    pydantic-ai writes them). The key and base URL come from the environment variables the
    provider's official SDK reads (``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``,
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``) unless ``options`` give them; ``options``
    are the provider's fields (``max_tokens``, ``system``, ``thinking_budget``...).
    ``ValueError`` for a string without a provider or model, or an unknown provider."""
    name, colon, model_name = spec.partition(":")
    if not colon or not name or not model_name:
        raise ValueError(f"a model string is 'provider:model' (such as "
                         f"'anthropic:claude-sonnet-4-5'), not {spec!r}")
    return make_provider(ALIASES.get(name, name), model=model_name, **options)


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
