"""What a provider's request builder provides: the HTTP request and the next turn's messages.

A provider module is sans-IO: it turns a conversation (a list of provider-format
message dicts) and a set of tools into an :class:`HTTPRequest` (URL, headers, JSON
body), turns an assembled :class:`~streamflow.core.message.Message` back into the
provider's own assistant message (thinking signatures, tool ids and argument
objects preserved), and turns :class:`~streamflow.app.tools.ToolResult` objects into the
provider's tool-result messages. Sending the request is somebody else's job.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...core.message import Message
from ...wire.dialects.request_base import HTTPRequest
from ..tools import Tool, ToolResult

__all__ = ["HTTPRequest", "JSONDict", "Provider"]

JSONDict = dict[str, Any]


@dataclass(slots=True)
class Provider(ABC):
    """Request builder of one provider API (see the module doc).

    ``base_url`` defaults to the environment variable the provider's official SDK reads
    (``env_base_url``: ``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``), else the provider's
    public endpoint; ``api_key`` to the provider's environment variable (``env_key``);
    ``extra_body`` is merged into every request body last (provider-specific options:
    ``temperature``, ``reasoning``...).
    """

    name: ClassVar[str] = ""
    dialect: ClassVar[str] = ""
    env_key: ClassVar[str] = ""
    env_base_url: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    default_model: ClassVar[str] = ""

    model: str = ""
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    max_tokens: int = 2048
    system: str | None = None
    extra_body: JSONDict = field(default_factory=dict)
    extra_headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = self.model or self.default_model
        if self.api_key is None and self.env_key:
            self.api_key = os.environ.get(self.env_key) or None
        from_env = os.environ.get(self.env_base_url) if self.env_base_url else None
        self.base_url = (self.base_url or from_env or self.default_base_url).rstrip("/")

    def __repr__(self) -> str:
        """The provider's fields with no credential: ``api_key='<redacted>'`` when one is
        set, ``base_url``'s credential parameters and ``extra_headers``' credential
        values masked. (A subclass must be a ``@dataclass(repr=False)`` to keep it; one
        that is not still leaves ``api_key`` out.)"""
        from dataclasses import fields

        from ...wire.redaction import REDACTED, redact_headers, redact_url, redact_value
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "api_key":
                shown: Any = REDACTED if value else value
            elif not f.repr:
                continue
            elif f.name == "base_url" and isinstance(value, str):
                shown = redact_url(value)
            elif f.name == "extra_headers":
                shown = redact_headers(value)
            else:
                shown = redact_value(value)
            parts.append(f"{f.name}={shown!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def http_headers(self) -> dict[str, str]:
        """The request headers: JSON in, SSE out, the dialect's fixed and credential
        headers (from its request side in the registry), then ``extra_headers``."""
        from ...wire.dialects import get_request
        return {"content-type": "application/json", "accept": "text/event-stream",
                **get_request(self.dialect).credentials(self.api_key), **self.extra_headers}

    def endpoint(self) -> str:
        """The streaming endpoint's URL (the dialect's path under ``base_url``)."""
        from ...wire.dialects import get_request
        return get_request(self.dialect).url(self.base_url or "", self.model)

    @staticmethod
    def user_message(text: str) -> JSONDict:
        """A user turn holding ``text``."""
        return {"role": "user", "content": text}

    @abstractmethod
    def request(self, messages: Sequence[Mapping[str, Any]],
                tools: Iterable[Tool] = ()) -> HTTPRequest:
        """The streaming request for ``messages`` (in the provider's dialect) offering ``tools``."""

    @abstractmethod
    def tool_specs(self, tools: Iterable[Tool]) -> list[JSONDict]:
        """The tools in the provider's ``tools`` array format."""

    @abstractmethod
    def assistant_message(self, message: Message) -> JSONDict:
        """The assembled message as the provider's assistant message for the next request."""

    @abstractmethod
    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[JSONDict]:
        """Tool results as the provider's messages, in call order."""

    @staticmethod
    @abstractmethod
    def tool_result_ids(body: Mapping[str, Any]) -> list[str]:
        """The tool-call ids of every tool result in a request body (``[]`` for a first turn)."""
