"""Content blocks of an Anthropic stream: ``content_block_start/delta/stop`` onto groups.

Text, thinking, tool and redacted blocks become UniEvent groups written to the
:class:`~streamflow.dialects.base.Emitter`, one block at a time; any other block
(server tools, tool results, unknown types) is kept whole in the message
``provider["extra_blocks"]``. Unknown delta types ride on an empty fragment of their
block. The mapping rules are in :mod:`streamflow.dialects.anthropic.decode`.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic_core import from_json

from ...errors import LimitExceededError, ProtocolError
from ...events import InlineThinkingItem, JSONDict, TextItem, ThinkingItem, ToolCallItem
from ...limits import Limits
from ..base import Emitter
from ..wire_values import expect_str

__all__ = ["BlockMapper"]

_GROUP_BLOCKS: Final = ("text", "thinking", "tool_use", "redacted_thinking")
_DELTA_BLOCK: Final = {"text_delta": "text", "citations_delta": "text",
                       "thinking_delta": "thinking", "signature_delta": "thinking",
                       "input_json_delta": "tool_use"}


class BlockMapper:
    """The open content blocks of one Anthropic message, mapped onto the emitter."""

    __slots__ = ("_blocks", "_current", "emitter", "limits")

    def __init__(self, emitter: Emitter, limits: Limits) -> None:
        self.emitter = emitter
        self.limits = limits
        self._blocks: dict[int, JSONDict] = {}   # open blocks by index
        self._current: int | None = None         # index of the open UniEvent group

    def close_all(self) -> None:
        """Close every block still open (a stream cut short by ``max_tokens``)."""
        for index in sorted(self._blocks):
            self.stop(index)

    def start(self, index: int, block: JSONDict) -> None:
        """``content_block_start``: open a group (or a block kept whole at its stop)."""
        if index in self._blocks:
            raise ProtocolError(f"anthropic content block {index} started twice")
        btype: Any = block.get("type")
        grouped = btype in _GROUP_BLOCKS
        if grouped and self._current is not None:
            raise ProtocolError(f"anthropic content block {index} started while block "
                                f"{self._current} is still open")
        state: JSONDict = {"type": btype, "block": block, "opened": False, "json": [],
                           "size": 0, "args": False}
        self._blocks[index] = state
        if not grouped:
            return  # kept whole in extra_blocks at its stop
        em = self.emitter
        self._current = index
        state["opened"] = True
        if btype == "tool_use":
            em.tool_call("", expect_str(block.get("name"), "tool_use.name"),
                         expect_str(block.get("id"), "tool_use.id"),
                         self._block_extras(block, ("type", "id", "name", "input")), new=True)
        elif btype == "redacted_thinking":
            em.delta(InlineThinkingItem(
                "inline_thinking.delta", expect_str(block.get("data"), "data").encode(),
                None, {"block_type": "redacted_thinking"}))
        else:
            initial = expect_str(block.get(btype), f"{btype} block")
            extras = self._block_extras(block, ("type", "text", "thinking", "signature"))
            sig = expect_str(block.get("signature"), "thinking.signature")
            if not (initial or extras or sig):
                state["opened"] = False  # wait for the first delta
            elif btype == "text":
                em.text(initial, extras)
            else:
                em.thinking(initial, {"signature": sig} if sig else None, extras)

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
        if index != self._current:
            raise ProtocolError(f"anthropic delta for block {index} while block "
                                f"{self._current} streams")
        expected = _DELTA_BLOCK.get(dtype) if type(dtype) is str else None
        if expected is not None and expected != btype:
            raise ProtocolError(f"anthropic {dtype} on a {btype} block (index {index})")
        state["opened"] = True
        em = self.emitter
        if dtype == "text_delta":  # em.text / em.thinking, one call less per token
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
        elif dtype == "signature_delta":
            em.thinking("", {"signature": expect_str(delta.get("signature"), "signature")})
        elif dtype == "citations_delta":
            em.text("", {"citations": [delta.get("citation")]})
        else:
            self._unknown_delta(btype, delta)

    def _unknown_delta(self, btype: str, delta: JSONDict) -> None:
        extra = {"unknown_deltas": [delta]}
        em = self.emitter
        if btype == "text":
            em.text("", extra)
        elif btype == "thinking":
            em.thinking("", None, extra)
        elif btype == "tool_use":
            em.tool_call("", provider=extra)
        else:
            em.delta(InlineThinkingItem("inline_thinking.delta", b"", None, extra))

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
        em = self.emitter
        if btype == "tool_use" and not state["args"] and block.get("input"):
            em.tool_call(json.dumps(block["input"], ensure_ascii=False))
        if not state["opened"]:
            em.text("") if btype == "text" else em.thinking("")
        em.close_group()
        self._current = None

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
