"""OpenAI chat's assistant message: what a next turn sends back, what a JSON answer holds.

``assistant_message(items)``: ``content`` (``null`` when there is no text), every
tool call as a ``tool_calls`` entry (arguments as JSON text, ``extra_content``
kept), and the reasoning state a later turn needs: ``reasoning_details`` (signed
text entries, encrypted entries, in order) when the items carry any, else the
visible reasoning as ``reasoning_content``. ``reasoning_items`` is the inverse for
OpenRouter's ``reasoning_details``.
"""

from __future__ import annotations

from typing import Any

from ....core.events import InlineThinkingItem, JSONDict, TextItem, ThinkingItem, ToolCallItem
from ....core.requests import Part
from .._request_values import arguments_text


def assistant_message(parts: list[Any]) -> JSONDict:
    """``{"role": "assistant", "content", "tool_calls"?, reasoning fields?}`` (module doc)."""
    text = "".join(p.text for p in parts if isinstance(p, TextItem))
    out: JSONDict = {"role": "assistant", "content": text or None}
    details: list[Any] = []
    reasoning: list[str] = []
    for part in parts:
        if isinstance(part, ThinkingItem):
            reasoning.append(part.thinking)
            details += (part.fidelity or {}).get("reasoning_details") or []
        elif isinstance(part, InlineThinkingItem) and part.fidelity is not None:
            details.append({**part.fidelity, "data": part.data.decode("utf-8", "replace")})
    if details:
        out["reasoning_details"] = details
    elif any(reasoning):
        out["reasoning_content"] = "".join(reasoning)
    calls = [_tool_call(p) for p in parts if isinstance(p, ToolCallItem)]
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_call(item: ToolCallItem) -> JSONDict:
    out: JSONDict = {"id": item.tool_call_id, "type": "function",
                     "function": {"name": item.name, "arguments": arguments_text(item)}}
    extra = (item.fidelity or {}).get("extra_content")
    if extra:
        out["extra_content"] = extra
    return out


def reasoning_items(details: list[JSONDict]) -> list[Part]:
    """OpenRouter ``reasoning_details`` as the decoder maps them (see the module doc)."""
    parts: list[Part] = []
    visible = [d for d in details if d.get("type") != "reasoning.encrypted"]
    if visible:
        fidelity: JSONDict = {"reasoning_details": visible}
        for entry in visible:
            if entry.get("signature"):
                fidelity["signature"] = entry["signature"]
        text = "".join(str(d.get("text") or d.get("summary") or "") for d in visible)
        parts.append(ThinkingItem("thinking.done", text, fidelity))
    for entry in details:
        if entry.get("type") == "reasoning.encrypted":
            meta = {k: v for k, v in entry.items() if k != "data"}
            parts.append(InlineThinkingItem("inline_thinking.done",
                                            str(entry.get("data") or "").encode(), meta))
    return parts
