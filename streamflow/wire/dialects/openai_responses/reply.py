"""OpenAI Responses' answer outside the stream: the non-streaming ``response`` object.

``message_body(message)`` is what ``POST /v1/responses`` returns for ``stream:
false``: the output items (reasoning with its summaries and encrypted content,
messages, function calls), ``status`` (``incomplete`` with its reason for a
``length`` cut), ``created_at`` in seconds (as the streaming encoder writes it) and
the usage object. The error envelope is OpenAI's (``openai_chat.reply.error_body``).
"""

from __future__ import annotations

import uuid
from typing import Any

from ....core.events import InlineThinkingItem, JSONDict, TextItem, ThinkingItem, ToolCallItem
from ....core.message import Message
from .._request_values import arguments_text
from ..encoder import unix_seconds
from ..request_base import reply_id
from .encode import responses_usage_json

__all__ = ["message_body"]


def _new(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def message_body(message: Message) -> JSONDict:
    """The non-streaming ``response`` body of ``message`` (see the module doc)."""
    output: list[JSONDict] = []
    summaries: list[JSONDict] = []
    texts: list[JSONDict] = []

    def flush_text() -> None:
        if texts:
            output.append({"id": _new("msg_"), "type": "message", "status": "completed",
                           "role": "assistant", "content": list(texts)})
            texts.clear()

    def flush_reasoning(encrypted: Any = None, item_id: Any = None) -> None:
        if summaries or encrypted:
            item: JSONDict = {"id": item_id or _new("rs_"), "type": "reasoning",
                              "summary": list(summaries)}
            if encrypted:
                item["encrypted_content"] = encrypted
            output.append(item)
            summaries.clear()

    for item in message.items:
        if isinstance(item, ThinkingItem):
            flush_text()
            summaries.append({"type": "summary_text", "text": item.thinking})
        elif isinstance(item, InlineThinkingItem):
            flush_text()
            flush_reasoning(item.data.decode("utf-8", "replace"), (item.fidelity or {}).get("id"))
        else:
            flush_reasoning()
            if isinstance(item, TextItem):
                texts.append({"type": "output_text", "text": item.text, "annotations": []})
            elif isinstance(item, ToolCallItem):
                flush_text()
                output.append({"id": _new("fc_"), "type": "function_call",
                               "status": "completed", "call_id": item.tool_call_id,
                               "name": item.name, "arguments": arguments_text(item)})
    flush_reasoning()
    flush_text()
    status = "incomplete" if message.finish_reason == "length" else "completed"
    body: JSONDict = {"id": reply_id(message, "resp_"), "object": "response",
                      "created_at": unix_seconds(message.created_at),
                      "model": message.model or "unknown", "status": status,
                      "output": output, "usage": responses_usage_json(message.usage_metadata)}
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    return body
