"""Request builder of the Anthropic Messages API (``POST /v1/messages``, ``stream: true``).

The assistant message rebuilt from a :class:`~streamflow.core.message.Message` keeps what
the API needs to continue a turn faithfully:

* ``thinking`` blocks with their ``signature`` (from the item's ``fidelity``); a
  thinking item without a signature (reasoning from another provider) cannot be
  verified by the API and is left out;
* ``redacted_thinking`` blocks with their opaque ``data``;
* ``text`` blocks (with their ``citations`` when the stream carried some; empty
  text is left out, the API refuses it);
* ``tool_use`` blocks with the call's id, name and parsed ``input`` object;
* server-tool blocks the decoder kept whole (``provider["extra_blocks"]``), put back
  at their original block index.

Tool results become one ``user`` message of ``tool_result`` blocks, in call order,
with ``is_error`` set; a result with media (a ``ToolContent``) is its text and image
blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.message import Message
from ...wire.dialects.anthropic.request import API_VERSION, block
from ..tools import Tool, ToolResult
from .base import HTTPRequest, JSONDict, Provider

__all__ = ["API_VERSION", "AnthropicProvider"]


@dataclass(slots=True, repr=False)
class AnthropicProvider(Provider):
    """Anthropic Messages request builder; ``thinking_budget`` enables extended thinking."""

    name: ClassVar[str] = "anthropic"
    dialect: ClassVar[str] = "anthropic"
    env_key: ClassVar[str] = "ANTHROPIC_API_KEY"
    env_base_url: ClassVar[str] = "ANTHROPIC_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    default_model: ClassVar[str] = "claude-sonnet-4-5"

    thinking_budget: int | None = None

    def request(self, messages: Sequence[Mapping[str, Any]],
                tools: Iterable[Tool] = ()) -> HTTPRequest:
        """``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version``."""
        body: JSONDict = {"model": self.model, "max_tokens": self.max_tokens,
                          "messages": [dict(m) for m in messages], "stream": True}
        if self.system:
            body["system"] = self.system
        specs = self.tool_specs(tools)
        if specs:
            body["tools"] = specs
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
            body["max_tokens"] = max(self.max_tokens, self.thinking_budget + 1024)
        body.update(self.extra_body)
        return HTTPRequest(self.endpoint(), self.http_headers(), body)

    def tool_specs(self, tools: Iterable[Tool]) -> list[JSONDict]:
        """``[{"name", "description", "input_schema"}]``."""
        return [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools]

    def assistant_message(self, message: Message) -> JSONDict:
        """``{"role": "assistant", "content": [blocks...]}`` (see the module doc); of a
        message with several choices, the first (``message.choice(0)``)."""
        blocks = [b for b in (block(i) for i in message.choice(0).items) if b is not None]
        extras = [dict(b) for b in message.provider.get("extra_blocks") or []]
        for extra in sorted(extras, key=lambda b: int(b.get("index", 0))):
            position = int(extra.pop("index", len(blocks)))
            extra.pop("deltas", None)
            blocks.insert(min(position, len(blocks)), extra)
        return {"role": "assistant", "content": blocks}

    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[JSONDict]:
        """One ``user`` message with a ``tool_result`` block per result (none if empty)."""
        if not results:
            return []
        content = [{"type": "tool_result", "tool_use_id": r.tool_call_id,
                    "content": r.text if r.parts is None
                    else [b for b in (block(p) for p in r.parts) if b is not None],
                    "is_error": r.is_error} for r in results]
        return [{"role": "user", "content": content}]

    @staticmethod
    def tool_result_ids(body: Mapping[str, Any]) -> list[str]:
        """``tool_use_id`` of every ``tool_result`` block in the request's messages."""
        ids: list[str] = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, Mapping) else None
            if isinstance(content, list):
                ids += [str(b.get("tool_use_id", "")) for b in content
                        if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        return ids
