"""Output items of a Responses stream, written from UniEvent groups (for the encoder).

:class:`OutputWriter` keeps the open part and writes each group's events, numbered by
:class:`~streamflow.wire.dialects.openai_responses._sequence.OutputSequence`, as
its fragments arrive: ``output_item.added``, ``content_part.added`` (or
``reasoning_summary_part.added``), the deltas, their ``.done`` events with the whole
value from the group's ``.done`` item, and ``output_item.done`` with the whole item.
The mapping is described in :mod:`streamflow.wire.dialects.openai_responses.encode`.
"""

from __future__ import annotations

import base64
import json

from ....core.events import (
    ContentItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from .._frames_out import json_bytes
from ..encoder import new_id
from ._sequence import OutputSequence

_RIDING = frozenset({"item_id", "refusal", "annotations", "logprobs", "summary_index",
                     "content_index", "custom"})
# an item's own fields: provider extras never replace them (written first, overwritten)
_ITEM_FIELDS = frozenset({"id", "type", "status", "role", "content", "summary",
                          "encrypted_content", "call_id", "name", "arguments", "input",
                          "result"})


class OutputWriter(OutputSequence):
    """Writes each group's output item and its events (see the module doc)."""

    def __init__(self, keep: bool = True) -> None:
        super().__init__(keep)
        self._part: JSONDict | None = None    # the open part's routing fields
        self._args: list[str] = []            # the open call's argument text

    # -- groups ---------------------------------------------------------------
    def item(self, it: ContentItem) -> bytes:
        """The events of one fragment or ``.done`` item."""
        done = it.type.endswith(".done")
        if isinstance(it, TextItem):
            return self._text_done(it) if done else self._text(it)
        if isinstance(it, ThinkingItem):
            return self._thinking_done(it) if done else self._thinking(it)
        if isinstance(it, ToolCallItem):
            return self._call_done(it) if done else self._call(it)
        if not done:
            return b""
        if isinstance(it, InlineThinkingItem):
            return self._encrypted(it)
        if isinstance(it, InlineDataItem) and it.mime_type.startswith("image/"):
            rest = {k: v for k, v in (it.provider or {}).items() if k != "item_id"}
            fmt = it.mime_type.partition("/")[2]
            item = {**rest, "type": "image_generation_call",
                    "id": (it.provider or {}).get("item_id") or new_id("ig_"),
                    "result": base64.b64encode(it.data).decode("ascii"), "output_format": fmt}
            item.setdefault("status", "completed")
            return self.whole(item)
        return b""

    def _text(self, it: TextItem) -> bytes:
        provider = it.provider or {}
        out = b""
        if self._part is None:
            want = provider.get("item_id")
            item = self._item
            if item is None or item["type"] != "message" or (want and want != item["id"]):
                extras = {k: v for k, v in provider.items() if k not in _RIDING}
                out = self._open({**extras, "id": want or new_id("msg_"), "type": "message",
                                  "status": "in_progress", "role": "assistant",
                                  "content": []})
            refusal = bool(provider.get("refusal"))
            item = self._item
            assert item is not None
            self._part = {**self._at(), "content_index": len(item["content"]),
                          "refusal": refusal}
            part: JSONDict = ({"type": "refusal", "refusal": ""} if refusal else
                              {"type": "output_text", "text": "", "annotations": [],
                               "logprobs": []})
            out += self.event("response.content_part.added", **self._where(), part=part)
        refusal = self._part["refusal"]
        if it.text:
            if refusal:
                out += self.delta("response.refusal.delta", self._where(), it.text)
            else:
                logprobs = provider.get("logprobs") or []
                tail = b',"logprobs":' + json_bytes(logprobs) if logprobs else b',"logprobs":[]'
                out += self.delta("response.output_text.delta", self._where(), it.text, tail)
        for note in provider.get("annotations") or ():
            n = self._part.setdefault("notes", 0)
            self._part["notes"] = n + 1
            out += self.event("response.output_text.annotation.added", **self._where(),
                              annotation_index=n, annotation=note)
        return out

    def _where(self) -> JSONDict:
        assert self._part is not None
        return {k: self._part[k] for k in ("item_id", "output_index", "content_index")}

    def _text_done(self, it: TextItem) -> bytes:
        if self._part is None:
            return b""
        where = self._where()
        refusal = self._part["refusal"]
        self._part = None
        provider = it.provider or {}
        if refusal:
            part: JSONDict = {"type": "refusal", "refusal": it.text}
            out = self.event("response.refusal.done", **where, refusal=it.text)
        else:
            part = {"type": "output_text", "text": it.text,
                    "annotations": list(provider.get("annotations") or ()),
                    "logprobs": list(provider.get("logprobs") or ())}
            out = self.event("response.output_text.done", **where, text=it.text,
                             logprobs=part["logprobs"])
        assert self._item is not None
        self._item["content"].append(part)
        return out + self.event("response.content_part.done", **where, part=part)

    def _reasoning(self, provider: JSONDict) -> bytes:
        want = provider.get("item_id")
        item = self._item
        if (item is not None and item["type"] == "reasoning" and not item.get("encrypted_content")
                and (not want or want == item["id"])):
            return b""
        return self._open({"id": want or new_id("rs_"), "type": "reasoning", "summary": [],
                           "encrypted_content": None})

    def _thinking(self, it: ThinkingItem) -> bytes:
        provider = it.provider or {}
        out = b""
        if self._part is None:
            out = self._reasoning(provider)
            item = self._item
            assert item is not None
            text_part = "content_index" in provider
            slot = len(item.get("content") or ()) if text_part else len(item["summary"])
            self._part = {**self._at(), "text": text_part,
                          ("content_index" if text_part else "summary_index"): slot}
            if text_part:
                out += self.event("response.content_part.added", **self._slot(),
                                  part={"type": "reasoning_text", "text": ""})
            else:
                out += self.event("response.reasoning_summary_part.added", **self._slot(),
                                  part={"type": "summary_text", "text": ""})
        if it.thinking:
            kind = ("response.reasoning_text.delta" if self._part["text"]
                    else "response.reasoning_summary_text.delta")
            out += self.delta(kind, self._slot(), it.thinking)
        return out

    def _slot(self) -> JSONDict:
        assert self._part is not None
        key = "content_index" if self._part["text"] else "summary_index"
        return {"item_id": self._part["item_id"], "output_index": self._part["output_index"],
                key: self._part[key]}

    def _thinking_done(self, it: ThinkingItem) -> bytes:
        if self._part is None:
            return b""
        slot = self._slot()
        text_part = self._part["text"]
        self._part = None
        item = self._item
        assert item is not None
        sig = (it.fidelity or {}).get("signature") or (it.fidelity or {}).get("thought_signature")
        if sig:  # another dialect's signature: the item's opaque part
            item["encrypted_content"] = sig
        if text_part:
            part = {"type": "reasoning_text", "text": it.thinking}
            item.setdefault("content", []).append(part)
            return (self.event("response.reasoning_text.done", **slot, text=it.thinking)
                    + self.event("response.content_part.done", **slot, part=part))
        part = {"type": "summary_text", "text": it.thinking}
        item["summary"].append(part)
        return (self.event("response.reasoning_summary_text.done", **slot, text=it.thinking)
                + self.event("response.reasoning_summary_part.done", **slot, part=part))

    def _encrypted(self, it: InlineThinkingItem) -> bytes:
        want = (it.fidelity or {}).get("id")
        out = b""
        if self._item is not None and self._item.get("encrypted_content"):
            out = self.close()  # it holds another dialect's signature: this one is new
        out += self._reasoning({"item_id": want} if want else {})
        item = self._item
        assert item is not None
        rest = {k: v for k, v in (it.provider or {}).items()
                if k not in ("encrypted", "detail_type", "block_type", "choice_index")
                and k not in _ITEM_FIELDS}
        item.update(rest)
        item["encrypted_content"] = it.data.decode() or None
        return out + self.close()

    def _call(self, it: ToolCallItem) -> bytes:
        if self._part is not None or (self._item is not None
                                      and self._item["type"].endswith("call")
                                      and not it.name and not it.tool_call_id):
            args = it.arguments if isinstance(it.arguments, str) else ""
            self._args.append(args)
            if not args or self._item is None or self._item["type"] != "function_call":
                return b""
            return self.delta("response.function_call_arguments.delta", self._at(), args)
        provider = it.provider or {}
        custom = bool(provider.get("custom"))
        extras = {k: v for k, v in provider.items() if k not in _RIDING}
        item: JSONDict = {**extras, "id": provider.get("item_id") or new_id("fc_"),
                          "type": "custom_tool_call" if custom else "function_call",
                          "status": "in_progress",
                          "call_id": it.tool_call_id or new_id("call_"), "name": it.name}
        item["input" if custom else "arguments"] = ""
        out = self._open(item)
        self._args = []
        return out + self._call(ToolCallItem("tool_call.delta", "", "", it.arguments))

    def _call_done(self, it: ToolCallItem) -> bytes:
        item = self._item
        assert item is not None
        args = "".join(self._args)
        self._args = []
        if item["type"] == "custom_tool_call":
            value = it.arguments.get("input", "") if isinstance(it.arguments, dict) else ""
            text = value if isinstance(value, str) else json.dumps(value)
            item["input"] = text
            out = b""
            if text:
                out = self.event("response.custom_tool_call_input.delta", **self._at(),
                                 delta=text)
            return out + self.event("response.custom_tool_call_input.done", **self._at(),
                                    input=text) + self.close()
        if not args.strip():
            args = "{}"  # a call without arguments: "{}", never ""
            out = self.event("response.function_call_arguments.delta", **self._at(),
                             delta=args)
        else:
            out = b""
        item["arguments"] = args
        return out + self.event("response.function_call_arguments.done", **self._at(),
                                arguments=args) + self.close()
