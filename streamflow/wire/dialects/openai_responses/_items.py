"""Output items of the OpenAI Responses stream, mapped onto UniEvent groups.

:class:`ItemMapper` receives the events of one output item at a time (the decoder
in :mod:`streamflow.wire.dialects.openai_responses.decode` de-interleaves them) and writes its
groups: one per content part, summary part or call, then the reasoning item's
opaque ``inline_thinking``. ``.done`` events and ``output_item.done`` only fill in
what no delta carried, so a server that sends values whole is read the same way.
"""

from __future__ import annotations

import json
from typing import Any

from ....core.errors import ProtocolError
from ....core.events import InlineDataItem, InlineThinkingItem, JSONDict, ToolCallItem
from .._readers import b64_field, expect_obj, expect_str
from ..base import Emitter

_ROUTING_KEYS = frozenset({"type", "sequence_number", "item_id", "output_index",
                           "content_index", "summary_index", "delta", "logprobs", "obfuscation"})
_PART_TYPES = frozenset({None, "output_text", "refusal", "reasoning_text", "summary_text"})
_ITEM_KEYS = frozenset({"type", "id", "role", "content", "status", "call_id", "name",
                        "arguments", "input", "summary", "encrypted_content"})


def esc(text: str) -> str:
    """``text`` as the inside of a JSON string literal."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class OutputItem:
    """Decoding state of one output item (message, call, reasoning...)."""

    __slots__ = (
        "annotated",
        "done",
        "emitted",
        "extras",
        "first",
        "id",
        "index",
        "key",
        "kind",
        "opened",
        "raw",
        "type",
        "wrote",
    )

    def __init__(self, index: int, item: JSONDict) -> None:
        self.index = index
        self.raw = item
        self.type = expect_str(item.get("type"), "output item type")
        self.id = expect_str(item.get("id"), "output item id")
        self.extras = {k: v for k, v in item.items() if k not in _ITEM_KEYS and v is not None}
        self.done = self.opened = self.wrote = self.annotated = self.emitted = False
        self.kind = ""          # "text" / "thinking" of the current part, "" when none
        self.key: Any = None    # which part: ("c", content_index) or ("s", summary_index)
        self.first: JSONDict = {}


class ItemMapper:
    """Writes the groups of output items, one item at a time, onto an :class:`Emitter`."""

    __slots__ = ("calls", "em")

    def __init__(self, em: Emitter) -> None:
        self.em = em
        self.calls = 0                       # function/custom tool calls written

    def apply(self, it: OutputItem, short: str, ev: JSONDict) -> None:
        if it.done:
            raise ProtocolError(f"openai-responses {short} for output item {it.index} "
                                "after its output_item.done")
        if short == "output_item.added":
            if it.type in ("function_call", "custom_tool_call"):
                self._open_call(it, it.raw)
        elif short == "output_item.done":
            self.item_done(it, expect_obj(ev.get("item"), "openai-responses item"))
        elif it.type in ("function_call", "custom_tool_call"):
            self._call_event(it, short, ev)
        else:
            self._part_event(it, short, ev)

    def _call_event(self, it: OutputItem, short: str, ev: JSONDict) -> None:
        custom = it.type == "custom_tool_call"
        if not it.opened:
            self._open_call(it, it.raw)
        if short.endswith(".delta"):
            text = expect_str(ev.get("delta"), f"{short} delta")
        elif it.wrote:
            return
        else:
            text = expect_str(ev.get("input" if custom else "arguments"), short)
        it.wrote = True
        self.em.tool_call(esc(text) if custom else text, provider=self._extra(ev))

    def _open_call(self, it: OutputItem, item: JSONDict) -> None:
        custom = it.type == "custom_tool_call"
        value = expect_str(item.get("input" if custom else "arguments"), "call arguments")
        it.opened = it.emitted = True
        it.wrote = bool(value)
        provider = {"item_id": it.id, **it.extras} if it.id else dict(it.extras)
        if custom:
            provider["custom"] = True
            value = '{"input":"' + esc(value)
        self.em.close_group()
        self.em.delta(ToolCallItem(
            "tool_call.delta", expect_str(item.get("name"), "call name"),
            expect_str(item.get("call_id"), "call_id"), value, None, provider or None))

    def _part_event(self, it: OutputItem, short: str, ev: JSONDict) -> None:
        summary = short.startswith("reasoning_summary")
        slot = ev.get("summary_index" if summary else "content_index")
        if slot is not None and type(slot) is not int:
            raise ProtocolError(f"{short}: the part index must be an integer, got {slot!r:.40}")
        key = ("s" if summary else "c", slot)
        part = ev.get("part")
        ptype = expect_obj(part, "openai-responses part").get("type") if part is not None else None
        known = ptype is None or (type(ptype) is str and ptype in _PART_TYPES)
        if not known:  # a part type we do not map: kept whole
            if short.endswith("done"):
                self.em.keep("extra_items", {"output_index": it.index, "item_id": it.id,
                                             "content_index": slot, "part": part})
            return
        if short.endswith("part.added") or not it.kind or (slot is not None and key != it.key):
            self._end_part(it)
            thinking = it.type == "reasoning" or ptype == "reasoning_text"
            first: JSONDict = {"item_id": it.id} if it.id else {}
            if thinking:
                first["summary_index" if summary else "content_index"] = slot
            else:
                first.update(it.extras)
            if short.startswith("refusal") or ptype == "refusal":
                first["refusal"] = True
            it.kind, it.key, it.first = ("thinking" if thinking else "text"), key, first
        if short.endswith(".delta"):
            it.wrote = True
            self._frag(it, expect_str(ev.get("delta"), f"{short} delta"), self._extra(ev))
        elif short == "output_text.annotation.added":
            it.annotated = True
            self._frag(it, "", {"annotations": [ev.get("annotation")]})
        elif part is not None:  # *part.added / *part.done: the part so far / the whole part
            whole = part.get("refusal") if ptype == "refusal" else part.get("text")
            if whole and not it.wrote:
                self._frag(it, expect_str(whole, "part text"))
                it.wrote = True
            notes = part.get("annotations")
            if notes and not it.annotated:
                if type(notes) is not list:
                    raise ProtocolError("openai-responses part annotations must be a list")
                it.annotated = True
                self._frag(it, "", {"annotations": notes})
            if short.endswith("done"):
                self._end_part(it)
        elif short.endswith(".done"):  # *text.done / refusal.done: the whole value
            if not it.wrote:
                whole = ev.get("refusal") if ev.get("refusal") is not None else ev.get("text")
                it.wrote = True
                self._frag(it, expect_str(whole, f"{short} value"))
            if short.endswith("part.done"):
                self._end_part(it)

    def _frag(self, it: OutputItem, value: str, provider: JSONDict | None = None) -> None:
        em = self.em
        if not it.opened:
            em.close_group()
            it.opened = it.emitted = True
            provider = {**it.first, **provider} if provider else (it.first or None)
        if it.kind == "thinking":
            em.thinking(value, None, provider)
        else:
            em.text(value, provider)

    def _end_part(self, it: OutputItem) -> None:
        if it.kind and not it.opened:
            self._frag(it, "")  # an empty part is still an item
        if it.opened:
            self.em.close_group()
        it.opened = it.wrote = it.annotated = False
        it.kind, it.key = "", None

    @staticmethod
    def _extra(ev: JSONDict) -> JSONDict | None:
        extra = {k: v for k, v in ev.items() if k not in _ROUTING_KEYS and v is not None}
        for key in ("text", "arguments", "input", "refusal"):
            extra.pop(key, None)
        logprobs = ev.get("logprobs")
        if logprobs:
            extra["logprobs"] = logprobs if type(logprobs) is list else [logprobs]
        return extra or None

    def item_done(self, it: OutputItem, item: JSONDict) -> None:
        em = self.em
        if it.type in ("function_call", "custom_tool_call"):
            custom = it.type == "custom_tool_call"
            if not it.opened:
                self._open_call(it, item)
            elif not it.wrote and item.get("input" if custom else "arguments"):
                value = expect_str(item.get("input" if custom else "arguments"), "arguments")
                em.tool_call(esc(value) if custom else value)
            if custom:
                em.tool_call('"}')
            self.calls += 1
            em.close_group()
        elif it.type in ("message", "reasoning"):
            self._end_part(it)
            if not it.emitted:
                self._whole_parts(it, item)
            if it.type == "reasoning":
                self._reasoning_done(it, item)
        elif it.type == "image_generation_call" and type(item.get("result")) is str:
            fmt = item.get("output_format") if type(item.get("output_format")) is str else "png"
            rest = {k: v for k, v in item.items() if k not in ("result", "id")}
            rest["item_id"] = it.id
            data = b64_field(item["result"], "openai-responses image_generation_call result")
            em.close_group()
            em.delta(InlineDataItem("inline_data.delta", data, f"image/{fmt}", None, rest))
            em.close_group()
        else:
            em.keep("extra_items", {**item, "output_index": it.index})
        it.done = True

    def _whole_parts(self, it: OutputItem, item: JSONDict) -> None:
        """An item that arrived only whole (no part events): each part becomes a group."""
        if it.type == "reasoning":
            for n, part in enumerate(item.get("summary") or []):
                self._part_event(it, "reasoning_summary_part.done",
                                 {"summary_index": n, "part": part})
        for n, part in enumerate(item.get("content") or []):
            self._part_event(it, "content_part.done", {"content_index": n, "part": part})

    def _reasoning_done(self, it: OutputItem, item: JSONDict) -> None:
        enc = item.get("encrypted_content") or it.raw.get("encrypted_content")
        rest = {k: v for k, v in item.items()
                if k not in ("id", "summary", "content", "encrypted_content") and v is not None}
        rest["encrypted"] = bool(enc)
        self.em.close_group()
        self.em.delta(InlineThinkingItem(
            "inline_thinking.delta", expect_str(enc, "encrypted_content").encode(),
            {"id": it.id} if it.id else None, rest))
        self.em.close_group()
