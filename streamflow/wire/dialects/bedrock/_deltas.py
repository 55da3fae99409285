"""What one ConverseStream ``contentBlockDelta`` says: the content fragments of its keys.

A delta object may carry several keys (``text``, ``toolUse``, ``reasoningContent``,
``citation``, ``image``, or one this version does not know); :func:`delta_items` yields
one fragment per key, in order, for the block's group. An unknown key rides on an empty
fragment of the kind the block wrote last (``provider["unknown_deltas"]``).
"""

from __future__ import annotations

from collections.abc import Iterator

from ....core.errors import ProtocolError
from ....core.events import (
    ContentItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from .._readers import b64_field, expect_obj, expect_str, opt_obj


def delta_items(index: int, state: JSONDict, delta: JSONDict) -> Iterator[ContentItem]:
    """The fragments of block ``index``'s delta (``state``: the block's; its ``"last"`` kind
    is read as each fragment is taken, so iterate lazily)."""
    for key, value in delta.items():
        if key == "text":
            yield TextItem("text.delta", expect_str(value, "delta.text"), None, None)
        elif key == "toolUse":
            if not state.get("tool"):
                raise ProtocolError(f"toolUse delta for block {index}, which is no tool call")
            tool = expect_obj(value, "bedrock delta.toolUse")
            yield ToolCallItem("tool_call.delta", "", "",
                               expect_str(tool.get("input"), "toolUse.input"), None, None)
        elif key == "reasoningContent":
            yield from _reasoning(expect_obj(value, "bedrock delta.reasoningContent"))
        elif key == "citation":
            yield TextItem("text.delta", "", None, {"citations": [value]})
        elif key == "image":
            value = expect_obj(value, "bedrock delta.image")
            source = opt_obj(value.get("source"), "bedrock delta.image.source")
            extra = {k: v for k, v in value.items() if k != "source"} or None
            yield InlineDataItem(
                "inline_data.delta", b64_field(source.get("bytes", ""), "image bytes"),
                state.get("mime", "application/octet-stream"), None, extra)
        else:
            yield _unknown_delta(state, {key: value})


def _reasoning(value: JSONDict) -> list[ContentItem]:
    """The fragments of a ``reasoningContent`` delta (text, signature, redacted bytes)."""
    out: list[ContentItem] = []
    for key, part in value.items():
        if key == "text":
            out.append(ThinkingItem("thinking.delta",
                                    expect_str(part, "reasoningContent.text"), None, None))
        elif key == "signature":
            sig = expect_str(part, "reasoningContent.signature")
            out.append(ThinkingItem("thinking.delta", "", {"signature": sig}, None))
        elif key == "redactedContent":
            out.append(InlineThinkingItem("inline_thinking.delta",
                                          b64_field(part, "redactedContent"), None,
                                          {"block_type": "redactedContent"}))
        else:
            out.append(ThinkingItem("thinking.delta", "", None, {
                "unknown_deltas": [{"reasoningContent": {key: part}}]}))
    return out


def _unknown_delta(state: JSONDict, delta: JSONDict) -> ContentItem:
    """An unknown delta key rides on an empty fragment of the block's kind."""
    extra = {"unknown_deltas": [delta]}
    last = state["last"]
    if state.get("tool"):
        return ToolCallItem("tool_call.delta", "", "", "", None, extra)
    if last == "thinking":
        return ThinkingItem("thinking.delta", "", None, extra)
    if last == "inline_thinking":
        return InlineThinkingItem("inline_thinking.delta", b"", None, extra)
    return TextItem("text.delta", "", None, extra)
