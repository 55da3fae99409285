"""Content blocks of an Anthropic stream: ``content_block_start/delta/stop`` onto groups.

Text, thinking, tool and redacted blocks become UniEvent groups written to the
:class:`~streamflow.wire.dialects.base.Emitter`, one block at a time: a block that starts
while another streams is held and written after it
(:class:`~streamflow.wire.dialects._held_groups.HeldGroups`); any other block
(server tools, tool results, unknown types) is kept whole in the message
``provider["extra_blocks"]``. Unknown delta types ride on an empty fragment of their
block. The mapping rules are in :mod:`streamflow.wire.dialects.anthropic.decode`.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic_core import from_json

from ....core.errors import LimitExceededError, ProtocolError
from ....core.events import (
    ContentItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ....core.limits import Limits
from .._held_groups import HeldGroups
from .._readers import expect_str
from ..base import Emitter

_GROUP_BLOCKS: Final = ("text", "thinking", "tool_use", "redacted_thinking")
_DELTA_BLOCK: Final = {"text_delta": "text", "citations_delta": "text",
                       "thinking_delta": "thinking", "signature_delta": "thinking",
                       "input_json_delta": "tool_use"}


class BlockMapper:
    """The open content blocks of one Anthropic message, mapped onto the emitter."""

    __slots__ = ("_blocks", "_current", "_held", "emitter", "limits")

    def __init__(self, emitter: Emitter, limits: Limits) -> None:
        self.emitter = emitter
        self.limits = limits
        self._blocks: dict[int, JSONDict] = {}   # open blocks by index
        self._current: int | None = None         # index of the open UniEvent group
        self._held = HeldGroups(emitter)         # blocks that started while another streams

    def close_all(self) -> None:
        """Close every block still open (a stream cut short by ``max_tokens``)."""
        while self._blocks:
            current = self._current
            self.stop(current if current is not None and current in self._blocks
                      else min(self._blocks))

    def pending_items(self) -> list[ContentItem]:
        """Fragments of held blocks not written yet (for a partial message)."""
        return self._held.pending_items() if self._held else []

    def start(self, index: int, block: JSONDict) -> None:
        """``content_block_start``: open a group (or a block kept whole at its stop)."""
        if index in self._blocks or self._held.holds(index):
            raise ProtocolError(f"anthropic content block {index} started twice")
        btype: Any = block.get("type")
        grouped = btype in _GROUP_BLOCKS
        state: JSONDict = {"type": btype, "block": block, "opened": False, "json": [],
                           "size": 0, "args": False}
        self._blocks[index] = state
        if not grouped:
            return  # kept whole in extra_blocks at its stop
        if self._current is None:
            self._current = index
            self.emitter.close_group()
        else:  # overlapping blocks: this one is written when the open one ends
            self._held.hold(index)
        state["opened"] = True
        if btype == "tool_use":
            self._out(index, ToolCallItem(
                "tool_call.delta", expect_str(block.get("name"), "tool_use.name"),
                expect_str(block.get("id"), "tool_use.id"), "", None,
                self._block_extras(block, ("type", "id", "name", "input"))))
        elif btype == "redacted_thinking":
            self._out(index, InlineThinkingItem(
                "inline_thinking.delta", expect_str(block.get("data"), "data").encode(),
                None, {"block_type": "redacted_thinking"}))
        else:
            initial = expect_str(block.get(btype), f"{btype} block")
            extras = self._block_extras(block, ("type", "text", "thinking", "signature"))
            sig = expect_str(block.get("signature"), "thinking.signature")
            if not (initial or extras or sig):
                state["opened"] = False  # wait for the first delta
            elif btype == "text":
                self._out(index, TextItem("text.delta", initial, None, extras))
            else:
                self._out(index, ThinkingItem("thinking.delta", initial,
                                              {"signature": sig} if sig else None, extras))

    def _out(self, index: int, item: ContentItem) -> None:
        """One fragment of block ``index``: written when its group is open, else held."""
        if index == self._current:
            self.emitter.delta(item)
        else:
            self._held.put(index, item)

    @staticmethod
    def _block_extras(block: JSONDict, known: tuple[str, ...]) -> JSONDict | None:
        extra = {k: v for k, v in block.items() if k not in known and v not in (None, [], {})}
        return extra or None

    def delta(self, index: int, delta: JSONDict) -> None:
        """``content_block_delta``: one fragment of the open group (the per-token path)."""
        state = self._blocks.get(index)
        if state is None:
            raise ProtocolError(f"anthropic delta for content block {index}, which is not open")
        dtype: Any = delta.get("type")
        btype = state["type"]
        if btype not in _GROUP_BLOCKS:
            if dtype == "input_json_delta":
                part = expect_str(delta.get("partial_json"), "partial_json")
                state["size"] += len(part)
                limit = self.limits.max_tool_arguments_bytes
                if state["size"] > limit:
                    raise LimitExceededError("max_tool_arguments_bytes", limit)
                state["json"].append(part)
            else:
                state.setdefault("deltas", []).append(delta)
            return
        expected = _DELTA_BLOCK.get(dtype) if type(dtype) is str else None
        if expected is not None and expected != btype:
            raise ProtocolError(f"anthropic {dtype} on a {btype} block (index {index})")
        state["opened"] = True
        if index != self._current:  # a held block (overlapping on the wire)
            self._held.put(index, self._item(state, dtype, delta))
            return
        em = self.emitter
        if dtype == "text_delta":  # the common fragments built here: one call less per token
            text = delta.get("text")
            if type(text) is not str:
                text = expect_str(text, "text_delta.text")
            em.delta(TextItem("text.delta", text, None, None))
        elif dtype == "thinking_delta":
            text = delta.get("thinking")
            if type(text) is not str:
                text = expect_str(text, "thinking_delta.thinking")
            em.delta(ThinkingItem("thinking.delta", text, None, None))
        elif dtype == "input_json_delta":
            fragment = delta.get("partial_json")
            if type(fragment) is not str:
                fragment = expect_str(fragment, "partial_json")
            if not state["args"]:
                state["args"] = bool(fragment.strip())
            em.delta(ToolCallItem("tool_call.delta", "", "", fragment, None, None))
        else:
            em.delta(self._item(state, dtype, delta))

    def _item(self, state: JSONDict, dtype: Any, delta: JSONDict) -> ContentItem:
        """The fragment a delta of a group block makes (any delta type)."""
        if dtype == "text_delta":
            return TextItem("text.delta", expect_str(delta.get("text"), "text_delta.text"),
                            None, None)
        if dtype == "thinking_delta":
            return ThinkingItem("thinking.delta",
                                expect_str(delta.get("thinking"), "thinking_delta.thinking"),
                                None, None)
        if dtype == "input_json_delta":
            fragment = expect_str(delta.get("partial_json"), "partial_json")
            if not state["args"]:
                state["args"] = bool(fragment.strip())
            return ToolCallItem("tool_call.delta", "", "", fragment, None, None)
        if dtype == "signature_delta":
            return ThinkingItem("thinking.delta", "",
                                {"signature": expect_str(delta.get("signature"), "signature")},
                                None)
        if dtype == "citations_delta":
            return TextItem("text.delta", "", None, {"citations": [delta.get("citation")]})
        extra = {"unknown_deltas": [delta]}  # an unknown delta type rides on an empty fragment
        btype = state["type"]
        if btype == "text":
            return TextItem("text.delta", "", None, extra)
        if btype == "thinking":
            return ThinkingItem("thinking.delta", "", None, extra)
        if btype == "tool_use":
            return ToolCallItem("tool_call.delta", "", "", "", None, extra)
        return InlineThinkingItem("inline_thinking.delta", b"", None, extra)

    def stop(self, index: int) -> None:
        """``content_block_stop``: close the block's group (or keep the block whole)."""
        state = self._blocks.pop(index, None)
        if state is None:
            raise ProtocolError(f"anthropic content_block_stop for block {index}, "
                                "which is not open")
        btype, block = state["type"], state["block"]
        if btype not in _GROUP_BLOCKS:
            self._keep_block(index, state)
            return
        if btype == "tool_use" and not state["args"] and block.get("input"):
            self._out(index, ToolCallItem("tool_call.delta", "", "",
                                          json.dumps(block["input"], ensure_ascii=False),
                                          None, None))
        if not state["opened"]:
            self._out(index, TextItem("text.delta", "", None, None) if btype == "text"
                      else ThinkingItem("thinking.delta", "", None, None))
        if index != self._current:
            self._held.end(index)  # its group is written when its turn comes
            return
        self.emitter.close_group()
        self._current = self._held.release() if self._held else None

    def _keep_block(self, index: int, state: JSONDict) -> None:
        kept = dict(state["block"], index=index)
        text = "".join(state["json"])
        if text.strip():
            try:
                kept["input"] = from_json(text)
            except ValueError:
                kept["input_json"] = text
        if state.get("deltas"):
            kept["deltas"] = state["deltas"]
        self.emitter.keep("extra_blocks", kept)
