"""Encoder ``ollama``: UniEvents as Ollama's ``/api/chat`` (or ``/api/generate``) NDJSON.

One JSON line per fragment: ``message.thinking`` / ``message.content`` (``thinking``
/ ``response`` with ``endpoint="generate"``). Tool calls go out whole, one line per
call at its ``.done`` (arguments as an object, as Ollama sends them; a synthesised
id is left out so the reader makes the same one again). The stop event writes the
``done: true`` line with ``done_reason``, ``prompt_eval_count``/``eval_count`` and
the timings kept in the stop event's ``provider``. :meth:`fail` writes
``{"error": "..."}``. Ollama has no field for signatures, encrypted reasoning or
binary output: those are not written (see docs/ENCODERS.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from ....core.errors import StreamflowError
from ....core.events import JSONDict, TextItem, ThinkingItem, ToolCallItem, UniEvent
from .._frames_out import json_line
from ..encoder import Encoder, native_reason
from .decode import FINISH_REASONS

__all__ = ["OllamaEncoder"]

_OWN_META = frozenset({"id", "model", "created_at", "done_at", "done_reason",
                       "message_extra"})


_RESERVED = frozenset({"error", "message", "response", "thinking", "done"})


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class OllamaEncoder(Encoder):
    """Sans-IO encoder of Ollama NDJSON streams (see module doc)."""

    name: ClassVar[str] = "ollama"
    media_type: ClassVar[str] = "application/x-ndjson"

    def __init__(self, endpoint: str = "chat") -> None:
        super().__init__()
        if endpoint not in ("chat", "generate"):
            raise TypeError("endpoint must be 'chat' or 'generate'")
        self.chat = endpoint == "chat"
        self._calls = 0

    def _line(self, event: UniEvent, message: JSONDict, **more: Any) -> bytes:
        line: JSONDict = {"model": self.meta.get("model") or "",
                          "created_at": more.pop("created_at", None) or _iso(event.created_at)}
        if self.chat:
            line["message"] = {"role": "assistant", "content": "", **message}
        else:
            line["response"] = message.get("content", "")
            if message.get("thinking"):
                line["thinking"] = message["thinking"]
        line["done"] = False
        line.update(more)
        return json_line(line)

    def encode_event(self, event: UniEvent) -> bytes:
        if event.event_type == "stop":
            return self._stop(event)
        item = event.content_items[0]
        done = item.type.endswith(".done")
        if isinstance(item, TextItem) and not done and item.text:
            return self._line(event, {"content": item.text})
        if isinstance(item, ThinkingItem) and not done and item.thinking:
            return self._line(event, {"thinking": item.thinking})
        if isinstance(item, ToolCallItem) and done:
            return self._call(event, item)
        return b""

    def _call(self, event: UniEvent, item: ToolCallItem) -> bytes:
        self._calls += 1
        extra = {k: v for k, v in (item.provider or {}).items() if k != "synthesized_id"}
        call: JSONDict = {"function": {"name": item.name, **extra,
                                       "arguments": item.arguments}}
        if not (item.provider or {}).get("synthesized_id"):
            call = {"id": item.tool_call_id, **call}
        if not self.chat:
            return b""  # /api/generate has no tool calls
        return self._line(event, {"tool_calls": [call]})

    def _stop(self, event: UniEvent) -> bytes:
        meta = self.meta
        calls = self._calls
        reason = native_reason(
            meta.get("done_reason"), event.finish_reason,
            lambda r: "tool_call" if r == "stop" and calls else FINISH_REASONS.get(r, "unknown"),
            {"length": "length", "unknown": "unknown"}.get(event.finish_reason or "", "stop"))
        usage = event.usage_metadata
        more: JSONDict = {k: v for k, v in meta.items()
                          if k not in _OWN_META and k not in _RESERVED and v is not None}
        more["done"] = True
        more["done_reason"] = reason
        if usage is not None and usage.prompt_tokens is not None:
            more["prompt_eval_count"] = usage.prompt_tokens
        if usage is not None and usage.response_tokens is not None:
            more["eval_count"] = usage.response_tokens
        return self._line(event, {}, created_at=meta.get("done_at"), **more)

    def encode_error(self, error: StreamflowError) -> bytes:
        return json_line({"error": error.message})
