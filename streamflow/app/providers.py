"""Where and who: the API a model is reached at, with which key, in which dialect.

A :class:`Provider` is the address book entry of one API -- its ``dialect`` (the
request side in :mod:`streamflow.wire.dialects` that writes the body, the decoder that
reads the answer), the base URL, the API key and the default model -- plus the request
options an application sets once (``max_tokens``, ``system``, ``thinking_budget``,
``extra_body``, ``extra_headers``). It turns a neutral conversation
(:class:`~streamflow.core.requests.Turn` s) and a set of tools into the streaming
:class:`HTTPRequest` through the dialect's own builder, so an assistant turn made from
an assembled message keeps what the API needs to continue it (thinking signatures,
encrypted reasoning, tool ids, argument objects, server-tool blocks), as
:mod:`streamflow.core.requests` describes. Sending the request is somebody else's job.

One class per API, one line each in :data:`PROVIDERS`; :func:`provider_for` reads a
model string (``"anthropic:claude-sonnet-4-5"``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from ..core.events import JSONDict
from ..core.requests import ChatRequest, Thinking, ToolSpec, Turn
from ..wire.dialects import get_request
from ..wire.dialects.request_base import HTTPRequest, RequestSide
from .tools import Tool

__all__ = ["ALIASES", "PROVIDERS", "AnthropicProvider", "GeminiProvider", "HTTPRequest",
           "OpenAIChatProvider", "OpenAIResponsesProvider", "Provider", "make_provider",
           "provider_class", "provider_for"]


@dataclass(slots=True, repr=False)
class Provider:
    """One API to send requests to (see the module doc); a subclass per API names it.

    ``base_url`` defaults to the environment variable the provider's official SDK reads
    (``env_base_url``: ``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``...), else the API's
    public endpoint; ``api_key`` to the first of ``env_keys`` set. ``thinking_budget``
    asks for reasoning of that many tokens (in the dialect's own terms: Anthropic's
    ``budget_tokens``, OpenAI's nearest ``reasoning_effort``...); ``extra_body`` is
    merged into every request body last (options with no neutral name).
    """

    name: ClassVar[str] = ""
    dialect: ClassVar[str] = ""
    env_keys: ClassVar[tuple[str, ...]] = ()
    env_base_url: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    default_model: ClassVar[str] = ""

    model: str = ""
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    max_tokens: int = 2048
    system: str | None = None
    thinking_budget: int | None = None
    extra_body: JSONDict = field(default_factory=dict)
    extra_headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.dialect:
            raise TypeError("Provider names no API: use a subclass (AnthropicProvider...) "
                            "or provider_for('anthropic:claude-sonnet-4-5')")
        self.model = self.model or self.default_model
        if self.api_key is None:
            self.api_key = next((os.environ[k] for k in self.env_keys if os.environ.get(k)),
                                None)
        from_env = os.environ.get(self.env_base_url) if self.env_base_url else None
        self.base_url = (self.base_url or from_env or self.default_base_url).rstrip("/")
        if not self.base_url:
            raise ValueError(f"provider {self.name!r} has no default base URL: give base_url=")

    def __repr__(self) -> str:
        """The provider's fields with no credential: ``api_key='<redacted>'`` when one is
        set, ``base_url``'s credential parameters and ``extra_headers``' credential
        values masked."""
        from ..wire.redaction import REDACTED, redact_headers, redact_url, redact_value
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "api_key":
                shown: Any = REDACTED if value else value
            elif f.name == "base_url" and isinstance(value, str):
                shown = redact_url(value)
            elif f.name == "extra_headers":
                shown = redact_headers(value)
            else:
                shown = redact_value(value)
            parts.append(f"{f.name}={shown!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def request_side(self) -> RequestSide:
        """The dialect's request side (its builder, URL and credential header)."""
        return get_request(self.dialect)

    def endpoint(self) -> str:
        """The streaming endpoint's URL (the dialect's path under ``base_url``)."""
        return self.request_side.url(self.base_url or "", self.model)

    def chat_request(self, conversation: Sequence[Turn], tools: Iterable[Tool | ToolSpec] = (), *,
                     response_format: JSONDict | None = None) -> ChatRequest:
        """The neutral request of ``conversation`` offering ``tools`` with this
        provider's model and options; ``response_format`` is the neutral structured
        output option (``{"type": "json_schema", "name", "schema", "strict"?}``)."""
        request = ChatRequest(
            model=self.model, turns=list(conversation), system=self.system,
            tools=[ToolSpec(t.name, t.description, t.parameters) for t in tools],
            max_tokens=self.max_tokens, include_usage=True,
            thinking=Thinking(budget=self.thinking_budget) if self.thinking_budget else None)
        if response_format is not None:
            request.options["response_format"] = response_format
        return request

    def request(self, conversation: Sequence[Turn], tools: Iterable[Tool | ToolSpec] = (), *,
                response_format: JSONDict | None = None) -> HTTPRequest:
        """The streaming HTTP request of ``conversation`` (see :meth:`chat_request`),
        built by the dialect's request side, with ``extra_headers`` and ``extra_body``."""
        return self.build(self.chat_request(conversation, tools,
                                            response_format=response_format))

    def build(self, chat: ChatRequest) -> HTTPRequest:
        """The streaming HTTP request of the neutral ``chat`` for this API, with this
        provider's model (``chat``'s when it has none), ``extra_headers`` and
        ``extra_body``; ``chat`` itself is left as it is. A failover chain builds each
        attempt of an answer this way, at each endpoint's provider."""
        if self.model and chat.model != self.model:
            chat = replace(chat, model=self.model)
        built = self.request_side.http_request(self.base_url or "", chat, api_key=self.api_key,
                                               headers=self.extra_headers)
        built.json.update(self.extra_body)
        return built


@dataclass(slots=True, repr=False)
class AnthropicProvider(Provider):
    """Anthropic Messages (``POST /v1/messages``); ``thinking_budget`` turns on extended
    thinking (``max_tokens`` raised above it, as the API wants)."""

    name: ClassVar[str] = "anthropic"
    dialect: ClassVar[str] = "anthropic"
    env_keys: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)
    env_base_url: ClassVar[str] = "ANTHROPIC_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    default_model: ClassVar[str] = "claude-sonnet-4-5"


@dataclass(slots=True, repr=False)
class OpenAIChatProvider(Provider):
    """OpenAI-compatible Chat Completions (``POST /chat/completions``): OpenAI, OpenRouter,
    DeepSeek and local servers (llama.cpp, vLLM, Ollama) through ``base_url``. The body asks
    for the final usage chunk; OpenAI's own API gets ``max_completion_tokens``."""

    name: ClassVar[str] = "openai-chat"
    dialect: ClassVar[str] = "openai-chat"
    env_keys: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    env_base_url: ClassVar[str] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    default_model: ClassVar[str] = "gpt-4.1-mini"


@dataclass(slots=True, repr=False)
class OpenAIResponsesProvider(Provider):
    """OpenAI Responses (``POST /responses``); reasoning items go back encrypted."""

    name: ClassVar[str] = "openai-responses"
    dialect: ClassVar[str] = "openai-responses"
    env_keys: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    env_base_url: ClassVar[str] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    default_model: ClassVar[str] = "gpt-4.1-mini"


@dataclass(slots=True, repr=False)
class GeminiProvider(Provider):
    """Gemini ``streamGenerateContent`` (SSE); the key from ``GOOGLE_API_KEY`` or
    ``GEMINI_API_KEY``, as google-genai reads them, sent as ``x-goog-api-key``."""

    name: ClassVar[str] = "gemini"
    dialect: ClassVar[str] = "gemini"
    env_keys: ClassVar[tuple[str, ...]] = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    env_base_url: ClassVar[str] = "GOOGLE_GEMINI_BASE_URL"
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com"
    default_model: ClassVar[str] = "gemini-2.5-flash"


PROVIDERS: dict[str, type[Provider]] = {
    cls.name: cls for cls in (AnthropicProvider, OpenAIChatProvider, OpenAIResponsesProvider,
                              GeminiProvider)}
"""Every provider by name (its dialect's name)."""

ALIASES: dict[str, str] = {"openai": "openai-chat", "google": "gemini",
                           "google-gla": "gemini"}
"""Other names a model string may give a provider by (``"openai:gpt-4.1"``)."""


def provider_for(spec: str, **options: Any) -> Provider:
    """The provider a model string names: ``"anthropic:claude-sonnet-4-5"``,
    ``"openai:gpt-4.1"``, ``"gemini:gemini-2.5-flash"`` (the provider before the first
    colon, the model after it, as pydantic-ai writes them). The key and base URL come
    from the environment variables the provider's official SDK reads unless ``options``
    give them; ``options`` are the provider's fields (``max_tokens``, ``system``,
    ``thinking_budget``...). ``ValueError`` for a string without a provider or model,
    or an unknown provider."""
    name, colon, model_name = spec.partition(":")
    if not colon or not name or not model_name:
        raise ValueError(f"a model string is 'provider:model' (such as "
                         f"'anthropic:claude-sonnet-4-5'), not {spec!r}")
    return make_provider(ALIASES.get(name, name), model=model_name, **options)


def provider_class(name: str) -> type[Provider]:
    """The provider class registered as ``name``; for another dialect with a request side
    (one registered from outside, :func:`streamflow.wire.dialects.register`) a class of
    its own with no default base URL or key variable. ``ValueError`` for neither."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    if name not in _PLAIN:
        from ..wire.dialects import REQUESTS
        if name not in REQUESTS:
            known = [*PROVIDERS, *(n for n in REQUESTS if n not in PROVIDERS)]
            raise ValueError(f"unknown provider {name!r}; known: {', '.join(known)}")
        plain = type(f"Provider[{name}]", (Provider,), {"__slots__": (), "name": name,
                                                         "dialect": name})
        _PLAIN[name] = plain
    return _PLAIN[name]


_PLAIN: dict[str, type[Provider]] = {}


def make_provider(name: str, **options: Any) -> Provider:
    """A provider instance (``model``, ``api_key``, ``base_url``... as keyword options)."""
    return provider_class(name)(**options)
