"""The non-streaming answer (``stream: false``) in each client dialect, from a Message (sans-IO).

``message_body(dialect, message)`` is the JSON body the API returns for a
non-streaming request: an Anthropic ``message``, an OpenAI ``chat.completion``, an
OpenAI Responses ``response``. Items map as the streaming encoders map them; usage
is the dialect's own usage object.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from ..dialects.anthropic.encode import anthropic_usage_json
from ..dialects.openai_chat.encode import openai_usage_json
from ..dialects.openai_responses.encode import responses_usage_json
from ..events import InlineThinkingItem, JSONDict, TextItem, ThinkingItem, ToolCallItem
from ..message import Message
from ..providers.formats.anthropic import block
from ..providers.formats.common import arguments_text, signature_of
from ..providers.formats.openai_chat import assistant_message

__all__ = ["message_body"]

_ANTHROPIC_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_call": "tool_use",
                      "unknown": "refusal"}
_CHAT_REASONS = {"stop": "stop", "length": "length", "tool_call": "tool_calls",
                 "unknown": "content_filter"}


def _id(message: Message, prefix: str) -> str:
    own = message.id or ""
    return own if own.startswith(prefix) else prefix + uuid.uuid4().hex[:24]


def message_body(dialect: str, message: Message) -> JSONDict:
    """The non-streaming response body of ``message`` in ``dialect``."""
    if dialect == "anthropic":
        return _anthropic(message)
    if dialect == "openai-chat":
        return _chat(message)
    if dialect == "openai-responses":
        return _responses(message)
    raise ValueError(f"no non-streaming body for dialect {dialect!r}")


def _anthropic(message: Message) -> JSONDict:
    content: list[JSONDict] = []
    for item in message.items:
        if isinstance(item, ThinkingItem):  # unsigned reasoning: no signature key, never ""
            thinking: JSONDict = {"type": "thinking", "thinking": item.thinking}
            signature = signature_of(item, "thought_signature")
            if signature:
                thinking["signature"] = signature
            content.append(thinking)
            continue
        b = block(item)
        if b is not None:
            content.append(b)
    reason = _ANTHROPIC_REASONS.get(message.finish_reason or "stop", "end_turn")
    raw = message.provider.get("stop_reason")
    if raw == "stop_sequence" and message.finish_reason == "stop":
        reason = raw
    return {"id": _id(message, "msg_"), "type": "message", "role": "assistant",
            "model": message.model or "unknown", "content": content, "stop_reason": reason,
            "stop_sequence": message.provider.get("stop_sequence") if reason == raw else None,
            "usage": anthropic_usage_json(message.usage_metadata)}


def _chat(message: Message) -> JSONDict:
    reply = assistant_message(list(message.items))
    reasoning = message.thinking
    if reasoning and "reasoning_content" not in reply:
        reply["reasoning"] = reasoning
    body: JSONDict = {"id": _id(message, "chatcmpl-"), "object": "chat.completion",
                      "created": message.created_at or int(time.time()),
                      "model": message.model or "unknown",
                      "choices": [{"index": 0, "message": reply, "logprobs": None,
                                   "finish_reason": _CHAT_REASONS.get(
                                       message.finish_reason or "stop", "stop")}]}
    usage = openai_usage_json(message.usage_metadata)
    if usage is not None:
        body["usage"] = usage
    return body


def _responses(message: Message) -> JSONDict:
    output: list[JSONDict] = []
    summaries: list[JSONDict] = []
    texts: list[JSONDict] = []

    def flush_text() -> None:
        if texts:
            output.append({"id": "msg_" + uuid.uuid4().hex[:24], "type": "message",
                           "status": "completed", "role": "assistant", "content": list(texts)})
            texts.clear()

    def flush_reasoning(encrypted: Any = None, item_id: Any = None) -> None:
        if summaries or encrypted:
            item: JSONDict = {"id": item_id or "rs_" + uuid.uuid4().hex[:24],
                              "type": "reasoning", "summary": list(summaries)}
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
                output.append({"id": "fc_" + uuid.uuid4().hex[:24], "type": "function_call",
                               "status": "completed", "call_id": item.tool_call_id,
                               "name": item.name, "arguments": arguments_text(item)})
    flush_reasoning()
    flush_text()
    status = "incomplete" if message.finish_reason == "length" else "completed"
    body: JSONDict = {"id": _id(message, "resp_"), "object": "response",
                      "created_at": message.created_at or int(time.time()),
                      "model": message.model or "unknown", "status": status,
                      "output": output,
                      "usage": responses_usage_json(message.usage_metadata)}
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    return body
