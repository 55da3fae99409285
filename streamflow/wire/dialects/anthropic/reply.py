"""Anthropic's answers outside the stream: the non-streaming ``message`` and the error envelope.

``message_body(message)`` is what ``POST /v1/messages`` returns for ``stream:
false``: the content blocks as the request builder writes them (a thinking block
keeps its signature, never ``""``), the stop reason as the streaming encoder
writes it (a raw ``stop_sequence`` kept when it reads back the same), and the
usage object. ``error_body`` is ``{"type": "error", "error": {"type", "message"}}``,
which the anthropic SDK reads into its status's exception class.
"""

from __future__ import annotations

from ....core.events import JSONDict, ThinkingItem
from ....core.message import Message
from .._request_values import signature_of
from ..encoder import native_reason
from ..request_base import ErrorInfo, reply_id
from .decode import FINISH_REASONS
from .encode import _REASONS, anthropic_usage_json

__all__ = ["ANTHROPIC_ERROR_TYPES", "error_body", "message_body"]

ANTHROPIC_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
    500: "api_error", 502: "api_error", 503: "overloaded_error", 504: "api_error",
    529: "overloaded_error"}
"""Status -> the ``error.type`` Anthropic's envelope gives it."""


def error_body(info: ErrorInfo) -> JSONDict:
    """``{"type": "error", "error": {"type", "message"}}`` (a provider's ``*_error`` type kept)."""
    kind = info.type if info.type and info.type.endswith("_error") \
        else ANTHROPIC_ERROR_TYPES.get(info.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": info.message}}


def message_body(message: Message) -> JSONDict:
    """The non-streaming ``message`` body of ``message`` (see the module doc)."""
    from ._content import block  # one content block per item, as a next turn sends it

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
    raw = message.provider.get("stop_reason")
    reason = native_reason(raw, message.finish_reason, lambda r: FINISH_REASONS.get(r, "unknown"),
                           _REASONS.get(message.finish_reason or "stop", "end_turn"))
    return {"id": reply_id(message, "msg_"), "type": "message", "role": "assistant",
            "model": message.model or "unknown", "content": content, "stop_reason": reason,
            "stop_sequence": message.provider.get("stop_sequence")
            if reason == "stop_sequence" else None,
            "usage": anthropic_usage_json(message.usage_metadata)}
