"""What a provider's request builder provides: the HTTP request and the next turn's messages.

A provider module is sans-IO: it turns a conversation (a list of provider-format
message dicts) and a set of tools into an :class:`HTTPRequest` (URL, headers, JSON
body), turns an assembled :class:`~streamflow.message.Message` back into the
provider's own assistant message (thinking signatures, tool ids and argument
objects preserved), and turns :class:`~streamflow.tools.ToolResult` objects into the
provider's tool-result messages. Sending the request is somebody else's job.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic_core import to_json

from ..message import Message
from ..tools import Tool, ToolResult

__all__ = ["HTTPRequest", "JSONDict", "Provider"]

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HTTPRequest:
    """A streaming HTTP request: ``POST url`` with ``headers`` and the JSON ``json`` body."""

    url: str
    headers: dict[str, str]
    json: JSONDict
    method: str = "POST"

    @property
    def body(self) -> bytes:
        """The body as UTF-8 JSON bytes."""
        return to_json(self.json)

    def redacted_headers(self) -> dict[str, str]:
        """The headers with credentials masked (for logs and ``--dry-run`` output).

        The credential headers are those of every registered request side
        (:func:`streamflow.dialects.credential_headers`), so a new dialect's key
        header is masked too.
        """
        from ..dialects import credential_headers
        secret = credential_headers()
        return {k: ("***" if k.lower() in secret else v) for k, v in self.headers.items()}


@dataclass(slots=True)
class Provider(ABC):
    """Request builder of one provider API (see the module doc).

    ``base_url`` defaults to the provider's public endpoint; ``api_key`` to the
    provider's environment variable (``env_key``); ``extra_body`` is merged into
    every request body last (provider-specific options: ``temperature``,
    ``reasoning``...).
    """

    name: ClassVar[str] = ""
    dialect: ClassVar[str] = ""
    env_key: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    default_model: ClassVar[str] = ""

    model: str = ""
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = 2048
    system: str | None = None
    extra_body: JSONDict = field(default_factory=dict)
    extra_headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = self.model or self.default_model
        if self.api_key is None and self.env_key:
            self.api_key = os.environ.get(self.env_key) or None
        self.base_url = (self.base_url or self.default_base_url).rstrip("/")

    def http_headers(self) -> dict[str, str]:
        """The request headers: JSON in, SSE out, the dialect's fixed and credential
        headers (from its request side in the registry), then ``extra_headers``."""
        from ..dialects import get_request
        return {"content-type": "application/json", "accept": "text/event-stream",
                **get_request(self.dialect).credentials(self.api_key), **self.extra_headers}

    def endpoint(self) -> str:
        """The streaming endpoint's URL (the dialect's path under ``base_url``)."""
        from ..dialects import get_request
        return get_request(self.dialect).url(self.base_url or "", self.model)

    @staticmethod
    def user_message(text: str) -> JSONDict:
        """A user turn holding ``text``."""
        return {"role": "user", "content": text}

    @abstractmethod
    def request(self, messages: Sequence[Mapping[str, Any]],
                tools: Iterable[Tool] = ()) -> HTTPRequest:
        """The streaming request for ``messages`` (provider format) offering ``tools``."""

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
