"""Hand-made UniEvent streams for the encoder tests (grammar-valid by construction)."""

from __future__ import annotations

from typing import Any

from streamflow.core.events import (
    ContentItem,
    FinishReason,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    join_fragments,
)
from streamflow.core.partial_json import parse_arguments


def group(fragments: list[ContentItem]) -> list[UniEvent]:
    """The delta events of one group, then its ``.done`` (fidelity/provider merged)."""
    events = [UniEvent("delta", [f], created_at=1) for f in fragments]
    first = fragments[0]
    done = join_fragments(first, [getattr(f, f.growing) for f in fragments], done=True)
    fid: dict[str, Any] = {}
    for f in fragments:
        fid.update(f.fidelity or {})
    done.fidelity = fid or None
    if isinstance(done, ToolCallItem):
        done.arguments = parse_arguments(str(done.arguments))
    return [*events, UniEvent("delta", [done], created_at=1)]


def stream(*groups: list[ContentItem], finish: FinishReason = "stop",
           usage: Usage | None = None, meta: dict[str, Any] | None = None) -> list[UniEvent]:
    events: list[UniEvent] = []
    for fragments in groups:
        events += group(fragments)
    if events:
        events[0].provider = {"id": "msg_1", "model": "m-1", **(meta or {})}
    stop = UniEvent("stop", [], usage or Usage(prompt_tokens=10, response_tokens=5),
                    finish, 1, None)
    return [*events, stop]


def text(*parts: str) -> list[ContentItem]:
    return [TextItem("text.delta", p) for p in parts]


def thinking(*parts: str, signature: str | None = None) -> list[ContentItem]:
    out: list[ContentItem] = [ThinkingItem("thinking.delta", p) for p in parts]
    if signature is not None:
        out.append(ThinkingItem("thinking.delta", "", {"signature": signature}))
    return out


def call(name: str, call_id: str, *args: str) -> list[ContentItem]:
    return [ToolCallItem("tool_call.delta", name, call_id, args[0] if args else ""),
            *(ToolCallItem("tool_call.delta", "", "", a) for a in args[1:])]
