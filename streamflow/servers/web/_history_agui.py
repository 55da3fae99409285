"""AG-UI's ``RunAgentInput`` in: its messages as the neutral conversation, or a provider's JSON.

The AG-UI side of ``web._history`` (see :func:`from_run_agent_input`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...core.events import InlineDataItem, JSONDict, TextItem, ThinkingItem, ToolCallItem
from ...core.requests import Part, ToolResultPart, Turn
from ._history import _b64, _bad, to_dialect


def _agui(message: Any) -> dict[str, Any]:
    if hasattr(message, "model_dump"):
        dumped: dict[str, Any] = message.model_dump(by_alias=True, exclude_none=True)
        return dumped
    if isinstance(message, Mapping):
        return dict(message)
    raise _bad("each AG-UI message must be an object")


def _agui_content(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextItem("text.done", content)] if content else []
    parts: list[Part] = []
    for piece in content or []:
        if piece.get("type") == "text":
            parts.append(TextItem("text.done", str(piece.get("text") or "")))
        elif piece.get("type") == "binary":
            mime = str(piece.get("mimeType") or "")
            if piece.get("data"):
                parts.append(InlineDataItem("inline_data.done", _b64(piece["data"]), mime))
            elif piece.get("url"):
                parts.append(InlineDataItem("inline_data.done", b"", mime, None,
                                            {"url": piece["url"]}))
    return parts


def from_run_agent_input(run_input: Any, *, dialect: str | None = None) -> Any:
    """AG-UI's ``RunAgentInput`` (the model or its JSON) as a list of Turn, or ``dialect``'s JSON.

    ``user`` -> a user turn; ``assistant`` -> an assistant turn (content, then its
    ``toolCalls``); ``tool`` messages -> a user turn of tool results (``error`` set:
    ``is_error``); ``reasoning`` -> thinking (``encryptedValue`` kept as the
    signature); ``system`` / ``developer`` are left out (the app's prompt).
    """
    data = _agui(run_input)
    turns: list[Turn] = []
    names: dict[str, str] = {}
    pending: list[Part] = []  # reasoning seen before its assistant message
    for raw in data.get("messages") or []:
        message = _agui(raw)
        role = message.get("role")
        if role == "user":
            turns.append(Turn("user", _agui_content(message.get("content"))))
        elif role == "reasoning":
            sig = message.get("encryptedValue")
            pending.append(ThinkingItem("thinking.done", str(message.get("content") or ""),
                                        {"signature": sig} if sig else None))
        elif role == "assistant":
            parts: list[Part] = [*pending, *_agui_content(message.get("content"))]
            pending.clear()
            for call in message.get("toolCalls") or []:
                fn = call.get("function") or {}
                names[call["id"]] = str(fn.get("name") or "")
                args = fn.get("arguments") or "{}"
                try:
                    parsed: str | JSONDict = json.loads(args)
                except ValueError:
                    parsed = args
                parts.append(ToolCallItem("tool_call.done", names[call["id"]], call["id"],
                                          parsed if isinstance(parsed, (dict, str)) else args))
            turns.append(Turn("assistant", parts))
        elif role == "tool":
            call_id = str(message.get("toolCallId") or "")
            error = message.get("error")
            result = ToolResultPart(call_id, str(error or message.get("content") or ""),
                                    bool(error), names.get(call_id, ""))
            if turns and turns[-1].role == "user" and all(
                    isinstance(p, ToolResultPart) for p in turns[-1].parts):
                turns[-1].parts.append(result)
            else:
                turns.append(Turn("user", [result]))
        elif role not in ("system", "developer", "activity"):
            raise _bad(f"unknown AG-UI message role {role!r}")
    return turns if dialect is None else to_dialect(turns, dialect)
