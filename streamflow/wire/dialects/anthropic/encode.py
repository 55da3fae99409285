"""Encoder ``anthropic``: UniEvents as an Anthropic Messages SSE stream.

Written as the events arrive, with named events (the SDK dispatches on ``event:``):

* ``message_start`` before the first block, with ``id``/``model`` from the first
  event's ``provider`` (an id is made up when absent; an unknown model is left
  out) and the counts the provider reported before its first item (the first event's
  ``provider["usage_so_far"]``: an Anthropic upstream's own ``message_start`` usage,
  Gemini's early ``promptTokenCount``...), else zero usage; the closing counters
  follow in ``message_delta``, as the API sends ``output_tokens``.
* Several choices (``n > 1``): the first only (see
  :class:`~streamflow.wire.dialects.encoder.Encoder`).
* One content block per UniEvent group, indexed in order, so a delta never lands in
  a block of another type: ``text`` (``text_delta``; ``provider["citations"]`` ->
  ``citations_delta``), ``thinking`` (``thinking_delta``; ``fidelity["signature"]``,
  else Gemini's ``thought_signature``, -> ``signature_delta``; never an empty
  signature), ``tool_call`` -> ``tool_use`` + ``input_json_delta`` (no delta for a
  call without arguments: its input is ``{}``), ``inline_thinking`` ->
  ``redacted_thinking`` (written whole at the group's end; empty data is skipped),
  ``inline_data`` -> an ``image``/``document`` block with a base64 source.
  ``provider["unknown_deltas"]`` are written back as they came; other provider keys
  of a group's first fragment ride on its ``content_block_start`` block.
* At stop: the blocks kept in ``provider["extra_blocks"]`` (server tools and their
  results) and ``provider["unknown_events"]``, then ``message_delta`` with
  ``stop_reason``/``stop_sequence``, the other message-level provider fields and the
  cumulative usage, then ``message_stop``.
* :meth:`fail` writes ``event: error`` with ``{"type": "error", "error": {...}}``.
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from ....core.errors import StreamflowError
from ....core.events import (
    ContentItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
)
from .._frames_out import event_head, is_token, json_bytes, sse
from ..encoder import Encoder, error_fields, native_reason, new_id
from .decode import FINISH_REASONS

__all__ = ["AnthropicEncoder", "anthropic_usage_json"]

_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_call": "tool_use",
            "unknown": "refusal"}
_OWN_META = frozenset({"id", "model", "stop_reason", "stop_sequence", "message_stop",
                       "extra_blocks", "unknown_events"})
_RIDING = ("citations", "unknown_deltas")
# the event types the SDK and the decoder act on: never written from another stream's data
_OWN_EVENTS = frozenset({"message_start", "message_delta", "message_stop", "content_block_start",
                         "content_block_delta", "content_block_stop", "ping", "error",
                         "completion"})
# what the decoder maps onto content (never written from a kept slot: another dialect's
# provider data would show as text or calls the upstream never sent)
_CONTENT_BLOCKS = frozenset({"text", "thinking", "tool_use", "redacted_thinking"})
_CONTENT_DELTAS = frozenset({"text_delta", "citations_delta", "thinking_delta",
                             "signature_delta", "input_json_delta"})


def anthropic_usage_json(usage: Usage | None) -> JSONDict:
    """The Anthropic usage object of ``usage`` (the raw one kept when it is Anthropic's)."""
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    raw = usage.provider if isinstance(usage.provider, dict) else {}
    native = "input_tokens" in raw and "total_tokens" not in raw
    out: JSONDict = dict(raw) if native else {}
    made = usage.cache_write_tokens
    if made is None and native:
        value = raw.get("cache_creation_input_tokens")
        made = value if type(value) is int else None
    if made is not None:
        out["cache_creation_input_tokens"] = made
    if usage.prompt_tokens is not None:
        out["input_tokens"] = usage.prompt_tokens - (usage.cached_tokens or 0) - (made or 0)
    if usage.cached_tokens is not None:
        out["cache_read_input_tokens"] = usage.cached_tokens
    if usage.response_tokens is not None:
        out["output_tokens"] = usage.response_tokens
    if usage.thoughts_tokens is not None:
        out["output_tokens_details"] = {**(out.get("output_tokens_details") or {}),
                                        "thinking_tokens": usage.thoughts_tokens}
    out.setdefault("input_tokens", 0)
    out.setdefault("output_tokens", 0)
    return out


def _is_content(obj: JSONDict, types: frozenset[str]) -> bool:
    kind = obj.get("type")
    return isinstance(kind, str) and kind in types


def _unknown_event(unknown: Any) -> bytes:
    """An event kept as it came: named by its type when that is a token, else data only
    (the SDK skips unnamed events; the decoder reads the type from the JSON). One whose
    type the SDK or the decoder would act on (another dialect's data) is not written."""
    if not isinstance(unknown, dict):
        return b""
    kind = unknown.get("type")
    if isinstance(kind, str) and kind in _OWN_EVENTS:
        return b""
    return sse(unknown, kind if is_token(kind) else None)


class AnthropicEncoder(Encoder):
    """Sans-IO encoder of the Anthropic Messages stream (see module doc)."""

    name: ClassVar[str] = "anthropic"

    def __init__(self) -> None:
        super().__init__()
        self._index = -1
        self._open: str | None = None    # kind of the group whose block is open
        self._prefix: bytes | None = None  # the open block's content_block_delta head

    def start(self, event: UniEvent) -> bytes:
        meta = self.meta
        message: JSONDict = {"id": meta.get("id") or new_id("msg_"), "type": "message",
                             "role": "assistant", "content": [], "stop_reason": None,
                             "stop_sequence": None,
                             "usage": anthropic_usage_json(self.usage_so_far)}
        if meta.get("model"):
            message["model"] = meta["model"]
        return sse({"type": "message_start", "message": message}, "message_start")

    def encode_event(self, event: UniEvent) -> bytes:
        if event.event_type == "stop":
            return self._stop(event)
        item = event.content_items[0]
        if item.type.endswith(".done"):
            return self._done(item)
        kind = item.kind
        if kind in ("inline_thinking", "inline_data", "embedding"):
            return b""  # written whole from the .done item
        out = b""
        if self._open is None:
            out = self._block_start(item)
        return out + self._deltas(item)

    # -- blocks ---------------------------------------------------------------
    def _block_start(self, item: ContentItem) -> bytes:
        self._index += 1
        self._prefix = None
        self._open = item.kind
        extras = {k: v for k, v in (item.provider or {}).items() if k not in _RIDING}
        block: JSONDict
        if isinstance(item, ToolCallItem):
            block = {**extras, "type": "tool_use", "id": item.tool_call_id or new_id("toolu_"),
                     "name": item.name, "input": {}}
        elif isinstance(item, ThinkingItem):
            block = {**extras, "type": "thinking", "thinking": ""}
        else:
            block = {**extras, "type": "text", "text": ""}
        return self._event("content_block_start", content_block=block)

    def _deltas(self, item: ContentItem) -> bytes:
        out = b""
        provider = item.provider
        if isinstance(item, ToolCallItem):
            if item.arguments:
                out = self._delta({"type": "input_json_delta", "partial_json": item.arguments})
        elif isinstance(item, ThinkingItem):
            if item.thinking:
                out = self._delta({"type": "thinking_delta", "thinking": item.thinking})
            fid = item.fidelity
            if fid:
                sig = fid.get("signature") or fid.get("thought_signature")
                if sig:
                    out += self._delta({"type": "signature_delta", "signature": sig})
        else:
            text = getattr(item, "text", "")
            if text:
                out = self._delta({"type": "text_delta", "text": text})
            if provider and provider.get("citations"):
                for citation in provider["citations"]:
                    out += self._delta({"type": "citations_delta", "citation": citation})
        if provider and provider.get("unknown_deltas"):
            for delta in provider["unknown_deltas"]:
                if isinstance(delta, dict) and not _is_content(delta, _CONTENT_DELTAS):
                    out += self._delta(delta)
        return out

    def _done(self, item: ContentItem) -> bytes:
        if isinstance(item, InlineThinkingItem):
            if not item.data:
                return b""
            return self._whole({"type": "redacted_thinking", "data": item.data.decode()})
        if isinstance(item, InlineDataItem):
            kind = "image" if item.mime_type.startswith("image/") else "document"
            source = {"type": "base64", "media_type": item.mime_type,
                      "data": base64.b64encode(item.data).decode("ascii")}
            return self._whole({"type": kind, "source": source})
        if self._open is None:
            return b""  # embeddings: nothing to write
        self._open = None
        return self._event("content_block_stop")

    def _whole(self, block: JSONDict, deltas: Any = ()) -> bytes:
        self._index += 1
        self._prefix = None
        out = self._event("content_block_start", content_block=block)
        for delta in deltas:
            out += self._delta(delta)
        return out + self._event("content_block_stop")

    def _event(self, kind: str, **fields: Any) -> bytes:
        return sse({"type": kind, "index": self._index, **fields}, kind)

    def _delta(self, delta: JSONDict) -> bytes:
        prefix = self._prefix
        if prefix is None:  # once per block: the event's bytes up to its delta
            prefix = self._prefix = (event_head("content_block_delta")
                                     + b'{"type":"content_block_delta","index":'
                                     + str(self._index).encode() + b',"delta":')
        return prefix + json_bytes(delta) + b"}\n\n"

    # -- message level --------------------------------------------------------
    def _stop(self, event: UniEvent) -> bytes:
        meta = self.meta
        out = b""
        for kept in meta.get("extra_blocks") or ():
            if not isinstance(kept, dict) or _is_content(kept, _CONTENT_BLOCKS):
                continue
            block = {k: v for k, v in kept.items() if k not in ("index", "deltas", "input_json")}
            deltas = [d for d in kept.get("deltas") or ()
                      if isinstance(d, dict) and not _is_content(d, _CONTENT_DELTAS)]
            if "input_json" in kept:
                deltas.append({"type": "input_json_delta", "partial_json": kept["input_json"]})
            out += self._whole(block, deltas)
        for unknown in meta.get("unknown_events") or ():
            out += _unknown_event(unknown)
        reason = native_reason(meta.get("stop_reason"), event.finish_reason,
                               lambda r: FINISH_REASONS.get(r, "unknown"),
                               _REASONS.get(event.finish_reason or "unknown", "end_turn"))
        delta: JSONDict = {k: v for k, v in meta.items() if k not in _OWN_META}
        delta["stop_reason"] = reason
        delta["stop_sequence"] = meta.get("stop_sequence") if reason == "stop_sequence" else None
        out += sse({"type": "message_delta", "delta": delta,
                    "usage": anthropic_usage_json(event.usage_metadata)}, "message_delta")
        stop = meta.get("message_stop")
        extra = stop if isinstance(stop, dict) else {}
        return out + sse({**extra, "type": "message_stop"}, "message_stop")

    def encode_error(self, error: StreamflowError) -> bytes:
        body = getattr(error, "body", None)
        if (isinstance(body, dict) and body.get("type") == "error"
                and isinstance(body.get("error"), dict)):
            return sse(body, "error")
        etype, message, _ = error_fields(error)
        return sse({"type": "error", "error": {"type": etype, "message": message}}, "error")
