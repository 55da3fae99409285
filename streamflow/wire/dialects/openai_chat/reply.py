"""OpenAI chat's answers outside the stream: the ``chat.completion`` body and the error envelope.

``message_body(message)`` is what ``POST /v1/chat/completions`` returns for
``stream: false``: one choice per choice the stream carried (items tagged
``provider["choice_index"]`` go to theirs, as the streaming encoder writes them;
choices are never merged), each with its finish reason, and the chat ``usage``.
``created`` is in seconds (:func:`~streamflow.wire.dialects.encoder.unix_seconds`, as the
streaming encoder writes it). ``error_body`` is OpenAI's ``{"error": {...}}``
envelope, which the openai SDK reads into its status's exception class.
"""

from __future__ import annotations

from typing import Any

from ....core.events import JSONDict
from ....core.message import Message
from ..encoder import native_reason, unix_seconds
from ..request_base import ErrorInfo, reply_id
from ._assistant import assistant_message
from .decode import FINISH_REASONS
from .encode import _REASONS, openai_usage_json

__all__ = ["OPENAI_ERROR_TYPES", "error_body", "message_body"]

OPENAI_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 429: "rate_limit_exceeded", 500: "server_error",
    502: "server_error", 503: "server_error", 504: "timeout"}
"""Status -> the ``error.type`` OpenAI's envelope gives it (also Responses')."""


def error_body(info: ErrorInfo) -> JSONDict:
    """``{"error": {"message", "type", "param", "code"}}``."""
    kind = info.type or OPENAI_ERROR_TYPES.get(info.status, "server_error")
    code = info.code if isinstance(info.code, str) else None
    return {"error": {"message": info.message, "type": kind, "param": None,
                      "code": code or kind}}


def _reads_as(raw: str) -> str:
    return FINISH_REASONS.get(raw, "unknown")


def message_body(message: Message) -> JSONDict:
    """The non-streaming ``chat.completion`` body of ``message`` (see the module doc)."""
    by_choice: dict[int, list[Any]] = {}
    for item in message.items:
        index = (item.provider or {}).get("choice_index", 0)
        by_choice.setdefault(index if type(index) is int else 0, []).append(item)
    others = {c["index"]: c for c in message.provider.get("choices") or ()
              if isinstance(c, dict) and type(c.get("index")) is int}
    choices: list[JSONDict] = []
    for index in sorted(set(by_choice) | set(others) | {0}):
        items = by_choice.get(index, [])
        reply = assistant_message(items)
        reasoning = "".join(getattr(i, "thinking", "") for i in items)
        if reasoning and "reasoning_content" not in reply:
            reply["reasoning"] = reasoning
        if index == 0:
            reason = native_reason(message.provider.get("finish_reason"), message.finish_reason,
                                   _reads_as,
                                   _REASONS.get(message.finish_reason or "stop", "stop"))
        else:
            reason = (others.get(index) or {}).get("finish_reason") or "stop"
        choices.append({"index": index, "message": reply, "logprobs": None,
                        "finish_reason": reason})
    created = message.provider.get("created")
    body: JSONDict = {"id": reply_id(message, "chatcmpl-"), "object": "chat.completion",
                      "created": created if type(created) is int
                      else unix_seconds(message.created_at),
                      "model": message.model or "unknown", "choices": choices}
    usage = openai_usage_json(message.usage_metadata)
    if usage is not None:
        body["usage"] = usage
    return body
