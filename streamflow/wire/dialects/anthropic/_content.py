"""Anthropic content blocks, both ways: a request's blocks as parts, parts as blocks.

:func:`parts` reads a message's ``content`` (``text``, ``image``/``document``,
``tool_use``, ``tool_result``, ``thinking``, ``redacted_thinking``) into the neutral
parts of :mod:`streamflow.core.requests`; :func:`block` writes one part back as a
block, leaving out what the API refuses (unsigned thinking, empty text), and
:func:`messages` joins turns into the alternating ``messages`` array.
"""

from __future__ import annotations

import base64
from typing import Any

from ....core.errors import RequestError
from ....core.events import (
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ....core.requests import Part, ToolResultPart, Turn
from .._request_values import arguments_object, need, obj, obj_list, signature_of


def parts(content: Any) -> list[Part]:
    """A message's ``content`` (a string or a list of blocks) as request parts."""
    if isinstance(content, str):
        return [TextItem("text.done", content)]
    return [_part(b) for b in obj_list(content, "content")]


def _part(b: JSONDict) -> Part:
    """One content block as a part (a ``tool_result``'s own blocks too)."""
    kind = b.get("type")
    if kind == "text":
        citations = b.get("citations")
        return TextItem("text.done", str(b.get("text") or ""),
                        provider={"citations": citations} if citations else None)
    if kind == "thinking":
        signature = b.get("signature")
        return ThinkingItem("thinking.done", str(b.get("thinking") or ""),
                            {"signature": signature} if signature else None)
    if kind == "redacted_thinking":
        return InlineThinkingItem("inline_thinking.done", str(b.get("data") or "").encode())
    if kind == "tool_use":
        return ToolCallItem("tool_call.done", str(need(b, "name", "tool_use")),
                            str(need(b, "id", "tool_use")),
                            arguments_object(b.get("input"), "tool_use"))
    if kind == "tool_result":
        content = b.get("content")
        result: str | list[TextItem | InlineDataItem] = content if isinstance(content, str) \
            else [p for p in (_part(c) for c in obj_list(content, "tool_result content"))
                  if isinstance(p, (TextItem, InlineDataItem))]
        return ToolResultPart(str(need(b, "tool_use_id", "tool_result")), result,
                              bool(b.get("is_error")))
    if kind in ("image", "document"):
        source = obj(b.get("source"), f"{kind} source")
        if source.get("type") == "base64":
            try:
                data = base64.b64decode(str(source.get("data") or ""), validate=True)
            except ValueError:
                raise RequestError(f"{kind} data is not base64") from None
            return InlineDataItem("inline_data.done", data, str(source.get("media_type") or ""))
        return InlineDataItem("inline_data.done", b"", str(source.get("media_type") or ""),
                              provider={"url": source.get("url"), "source": source})
    raise RequestError(f"unknown content block type {kind!r}")


def messages(turns: list[Turn]) -> list[JSONDict]:
    """The ``messages`` array: one message per run of same-role turns, tool results first."""
    out: list[JSONDict] = []
    for turn in turns:
        blocks = [b for b in (block(p) for p in turn.parts) if b is not None]
        _put_back(blocks, turn.provider.get("extra_blocks"))
        if out and out[-1]["role"] == turn.role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": turn.role, "content": blocks})
    for message in out:
        if message["role"] == "user":
            message["content"].sort(key=lambda b: b.get("type") != "tool_result")
    return out


def _put_back(blocks: list[JSONDict], kept: Any) -> None:
    """The blocks the decoder kept whole (server tools and their results), back at their
    block index, without the deltas they were read from."""
    extras = [dict(b) for b in kept or () if isinstance(b, dict)]
    for extra in sorted(extras, key=lambda b: int(b.get("index", 0))):
        position = int(extra.pop("index", len(blocks)))
        extra.pop("deltas", None)
        blocks.insert(min(position, len(blocks)), extra)


def block(part: object) -> JSONDict | None:
    """One content block for a part (``None`` for what the API cannot take back)."""
    if isinstance(part, TextItem):
        if not part.text:
            return None
        out: JSONDict = {"type": "text", "text": part.text}
        citations = (part.provider or {}).get("citations")
        if citations:
            out["citations"] = [c for c in citations if c is not None]
        return out
    if isinstance(part, ThinkingItem):
        signature = signature_of(part, "signature")
        if not signature:
            return None
        return {"type": "thinking", "thinking": part.thinking, "signature": signature}
    if isinstance(part, InlineThinkingItem):
        if not part.data:
            return None
        return {"type": "redacted_thinking", "data": part.data.decode("utf-8", "replace")}
    if isinstance(part, ToolCallItem):
        arguments = part.arguments if isinstance(part.arguments, dict) \
            else arguments_object(part.arguments, "tool call")
        return {"type": "tool_use", "id": part.tool_call_id, "name": part.name,
                "input": arguments}
    if isinstance(part, ToolResultPart):
        content: Any = part.content if isinstance(part.content, str) \
            else [b for b in (block(p) for p in part.content) if b is not None]
        return {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": content,
                "is_error": part.is_error}
    if isinstance(part, InlineDataItem):
        provider = part.provider or {}
        kind = "image" if part.mime_type.startswith("image/") or not part.mime_type \
            else "document"
        if provider.get("url"):
            return {"type": kind, "source": {"type": "url", "url": provider["url"]}}
        return {"type": kind, "source": {"type": "base64", "media_type": part.mime_type,
                                         "data": base64.b64encode(part.data).decode("ascii")}}
    return None
