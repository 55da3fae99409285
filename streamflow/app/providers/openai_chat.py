"""Request builder of OpenAI-compatible Chat Completions (``POST /chat/completions``).

Works with OpenAI, OpenRouter, DeepSeek and local servers (llama.cpp, vLLM, Ollama)
through ``base_url``. The body asks for the final usage chunk
(``stream_options.include_usage``).

The assistant message rebuilt from a :class:`~streamflow.core.message.Message` carries the
answer text as ``content`` (``null`` when there is none), every tool call as
``tool_calls`` entries whose ``function.arguments`` is the argument object as JSON
text, and the reasoning state the stream delivered for a later turn: OpenRouter's
``reasoning_details`` (text entries with their signatures and encrypted entries, in
stream order) when the stream carried any; otherwise visible reasoning text
(DeepSeek, llama.cpp, vLLM) as ``reasoning_content``, which those servers want back
within a tool-calling exchange.

Tool results become one ``role: "tool"`` message per result, in call order. The
format has no error flag, so an error result's text is its error object
(``{"error": ..., "message": ...}``), which models read well.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.events import InlineDataItem
from ...core.message import Message
from ...wire.dialects._request_values import image_data_url
from ...wire.dialects.openai_chat.request import assistant_message, is_official
from ..tools import Tool, ToolResult
from .base import HTTPRequest, JSONDict, Provider

__all__ = ["OpenAIChatProvider"]


@dataclass(slots=True, repr=False)
class OpenAIChatProvider(Provider):
    """OpenAI-compatible chat request builder (see the module doc)."""

    name: ClassVar[str] = "openai-chat"
    dialect: ClassVar[str] = "openai-chat"
    env_key: ClassVar[str] = "OPENAI_API_KEY"
    env_base_url: ClassVar[str] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    default_model: ClassVar[str] = "gpt-4.1-mini"

    def request(self, messages: Sequence[Mapping[str, Any]],
                tools: Iterable[Tool] = ()) -> HTTPRequest:
        """``POST {base_url}/chat/completions`` with a bearer token when a key is known."""
        conversation = [dict(m) for m in messages]
        if self.system:
            conversation.insert(0, {"role": "system", "content": self.system})
        body: JSONDict = {"model": self.model, "messages": conversation, "stream": True,
                          "stream_options": {"include_usage": True}}
        # OpenAI's own API wants max_completion_tokens (reasoning models refuse
        # max_tokens); compatible servers know max_tokens.
        official = is_official(self.base_url or "")
        body["max_completion_tokens" if official else "max_tokens"] = self.max_tokens
        specs = self.tool_specs(tools)
        if specs:
            body["tools"] = specs
        body.update(self.extra_body)
        return HTTPRequest(self.endpoint(), self.http_headers(), body)

    def tool_specs(self, tools: Iterable[Tool]) -> list[JSONDict]:
        """``[{"type": "function", "function": {"name", "description", "parameters"}}]``."""
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}}
                for t in tools]

    def assistant_message(self, message: Message) -> JSONDict:
        """``{"role": "assistant", "content", "tool_calls"?, reasoning fields?}``; of a
        message with several choices, the first (``message.choice(0)``)."""
        return assistant_message(list(message.choice(0).items))

    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[JSONDict]:
        """One ``{"role": "tool", "tool_call_id", "content"}`` message per result.

        A tool message carries text only: the images of results with media follow in
        one ``user`` message (``image_url`` parts), as the API takes them.
        """
        out: list[JSONDict] = [{"role": "tool", "tool_call_id": r.tool_call_id,
                                "content": r.text} for r in results]
        images: list[JSONDict] = [
            {"type": "image_url", "image_url": {"url": image_data_url(p)}}
            for r in results for p in r.parts or () if isinstance(p, InlineDataItem)
            and p.mime_type.startswith("image/")]
        if images:
            out.append({"role": "user", "content": [
                {"type": "text", "text": "The images the tool calls returned:"}, *images]})
        return out

    @staticmethod
    def tool_result_ids(body: Mapping[str, Any]) -> list[str]:
        """``tool_call_id`` of every ``role: "tool"`` message in the request."""
        return [str(m.get("tool_call_id", "")) for m in body.get("messages") or []
                if isinstance(m, Mapping) and m.get("role") == "tool"]
