"""Dialect ``anthropic``: the Anthropic Messages stream (and GLM/compatible servers).

Mapping onto UniEvent:

* ``text`` / ``thinking`` blocks -> ``text`` / ``thinking`` groups; ``signature_delta``
  -> a ``thinking.delta`` with ``thinking=""`` and ``fidelity={"signature": ...}``;
  ``citations_delta`` -> a ``text.delta`` with ``text=""`` and
  ``provider={"citations": [...]}`` (the ``.done`` item lists them all).
* ``redacted_thinking`` -> one ``inline_thinking`` group; ``data`` is the opaque
  string's UTF-8 bytes.
* ``tool_use`` -> a ``tool_call`` group; the first fragment carries name and id.
* ``server_tool_use``, ``*_tool_result`` and unknown block types are not for the
  client to act on: each is kept whole (its JSON input assembled and parsed) in
  the message ``provider["extra_blocks"]`` with its ``index``.
* Unknown delta types ride on an empty fragment of their block as
  ``provider={"unknown_deltas": [...]}``; unknown event types are kept in
  ``provider["unknown_events"]``. Nothing crashes, nothing is dropped.
* ``message_delta`` may repeat; its usage is cumulative and read at the end.
  ``prompt_tokens`` is ``input_tokens + cache_read + cache_creation`` (the whole
  prompt, as OpenAI counts it); ``cached_tokens`` is ``cache_read_input_tokens``;
  the raw usage stays in ``usage_metadata.provider``.
* The stop event's ``provider`` has the raw ``stop_reason`` and ``stop_sequence``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ..errors import ProtocolError, ProviderError
from ..events import FinishReason, InlineThinkingItem, JSONDict, Usage
from ..framing.sse import ServerSentEvent
from ..partial_json import parse_arguments
from .anthropic_wire import parse_event
from .base import Decoder, expect_str, load_json

__all__ = ["AnthropicDecoder", "FINISH_REASONS", "anthropic_usage", "parse_event"]

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_call",
}
_GROUP_BLOCKS = ("text", "thinking", "tool_use", "redacted_thinking")


def anthropic_usage(raw: JSONDict) -> Usage:
    """Map an Anthropic usage object onto :class:`Usage` (raw kept in ``provider``)."""
    inp = raw.get("input_tokens")
    read = raw.get("cache_read_input_tokens")
    made = raw.get("cache_creation_input_tokens")
    prompt = None if inp is None else inp + (read or 0) + (made or 0)
    return Usage(cached_tokens=read, prompt_tokens=prompt, thoughts_tokens=None,
                 response_tokens=raw.get("output_tokens"), provider=raw)


class AnthropicDecoder(Decoder):
    """Sans-IO decoder of the Anthropic Messages SSE stream (see module doc)."""

    name: ClassVar[str] = "anthropic"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "message_stop"
    parse_wire = staticmethod(parse_event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._blocks: dict[int, JSONDict] = {}   # open blocks by index
        self._current: int | None = None         # index of the open UniEvent group
        self._usage: JSONDict = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._extra_blocks: list[JSONDict] = []
        self._unknown_events: list[JSONDict] = []

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """An Anthropic stream opens with ``message_start`` (or ``ping``/``error``)."""
        data = getattr(frame, "data", "")
        return frame.event in ("message_start", "ping") or '"type":"message_start"' in \
            data.replace(" ", "")[:40]

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one SSE event (its JSON ``type`` decides, not the ``event:`` line)."""
        ev = load_json(frame.data, "anthropic event")
        if type(ev) is not dict:
            raise ProtocolError("anthropic event is not a JSON object", raw=frame.data)
        kind = ev.get("type")
        em = self.emitter
        if kind == "content_block_delta":
            self._delta(ev["index"], ev["delta"])
        elif kind == "ping":
            return
        elif em.stopped:
            raise ProtocolError(f"anthropic {kind!r} event after message_stop", raw=frame.data)
        elif kind == "content_block_start":
            self._start(ev["index"], ev["content_block"])
        elif kind == "content_block_stop":
            self._stop_block(ev["index"])
        elif kind == "message_start":
            self._message_start(ev["message"])
        elif kind == "message_delta":
            self._message_delta(ev)
        elif kind == "message_stop":
            self._finish_message(ev)
        elif kind == "error":
            err = ev.get("error") or {}
            raise ProviderError(str(err.get("message") or err or "provider error"),
                                type=err.get("type"), request_id=ev.get("request_id"),
                                body=ev)
        else:
            self._unknown_events.append(ev)
            em.note({"unknown_events": list(self._unknown_events)})

    # -- message level --------------------------------------------------------
    def _message_start(self, message: JSONDict) -> None:
        meta = {k: v for k, v in message.items()
                if k not in ("content", "usage", "stop_reason", "stop_sequence", "type", "role")}
        self.emitter.note(meta)
        self._usage.update(message.get("usage") or {})

    def _message_delta(self, ev: JSONDict) -> None:
        delta = ev.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self._stop_reason = delta["stop_reason"]
        if "stop_sequence" in delta:
            self._stop_sequence = delta["stop_sequence"]
        extra = {k: v for k, v in delta.items() if k not in ("stop_reason", "stop_sequence")}
        if extra:
            self.emitter.note(extra)
        for key, value in (ev.get("usage") or {}).items():
            if value is not None:
                self._usage[key] = value

    def _finish_message(self, ev: JSONDict) -> None:
        for index in sorted(self._blocks):  # cut short (max_tokens): close what is open
            self._stop_block(index)
        raw = self._stop_reason
        finish = FINISH_REASONS.get(raw or "", "unknown")
        provider: JSONDict = {"stop_reason": raw, "stop_sequence": self._stop_sequence}
        if self._extra_blocks:
            provider["extra_blocks"] = self._extra_blocks
        extra = {k: v for k, v in ev.items() if k != "type"}
        if extra:
            provider["message_stop"] = extra
        self.emitter.stop(anthropic_usage(self._usage), finish, provider)

    # -- blocks ---------------------------------------------------------------
    def _start(self, index: int, block: JSONDict) -> None:
        if index in self._blocks:
            raise ProtocolError(f"content block {index} started twice")
        btype = block.get("type")
        state: JSONDict = {"type": btype, "block": block, "opened": False, "json": []}
        self._blocks[index] = state
        if btype not in _GROUP_BLOCKS:
            return  # kept whole in extra_blocks at its stop
        em = self.emitter
        em.close_group()
        self._current = index
        if btype == "tool_use":
            state["opened"] = True
            em.tool_call("", expect_str(block.get("name"), "tool_use.name"),
                         expect_str(block.get("id"), "tool_use.id"),
                         self._block_extras(block, ("type", "id", "name", "input")), new=True)
        elif btype == "redacted_thinking":
            state["opened"] = True
            em.delta(InlineThinkingItem(
                "inline_thinking.delta", expect_str(block.get("data"), "data").encode(),
                None, {"block_type": "redacted_thinking"}))
        else:
            initial = expect_str(block.get(btype), f"{btype} block")
            extras = self._block_extras(block, ("type", "text", "thinking", "signature"))
            sig = block.get("signature")
            if initial or extras or sig:
                state["opened"] = True
                if btype == "text":
                    em.text(initial, extras)
                else:
                    em.thinking(initial, {"signature": sig} if sig else None, extras)

    @staticmethod
    def _block_extras(block: JSONDict, known: tuple[str, ...]) -> JSONDict | None:
        extra = {k: v for k, v in block.items() if k not in known and v not in (None, [], {})}
        return extra or None

    def _delta(self, index: int, delta: JSONDict) -> None:
        state = self._blocks.get(index)
        if state is None:
            raise ProtocolError(f"delta for content block {index}, which is not open")
        dtype = delta.get("type")
        if state["type"] not in _GROUP_BLOCKS:
            if dtype == "input_json_delta":
                state["json"].append(expect_str(delta.get("partial_json"), "partial_json"))
            else:
                state.setdefault("deltas", []).append(delta)
            return
        if index != self._current:
            raise ProtocolError(f"delta for block {index} while block {self._current} streams")
        state["opened"] = True
        em = self.emitter
        if dtype == "text_delta":
            em.text(expect_str(delta.get("text"), "text_delta.text"))
        elif dtype == "thinking_delta":
            em.thinking(expect_str(delta.get("thinking"), "thinking_delta.thinking"))
        elif dtype == "input_json_delta":
            em.tool_call(expect_str(delta.get("partial_json"), "partial_json"))
        elif dtype == "signature_delta":
            em.thinking("", {"signature": expect_str(delta.get("signature"), "signature")})
        elif dtype == "citations_delta":
            em.text("", {"citations": [delta.get("citation")]})
        else:
            self._unknown_delta(state["type"], delta)

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

    def _stop_block(self, index: int) -> None:
        state = self._blocks.pop(index, None)
        if state is None:
            raise ProtocolError(f"content_block_stop for block {index}, which is not open")
        btype, block = state["type"], state["block"]
        if btype not in _GROUP_BLOCKS:
            kept = dict(block, index=index)
            if state["json"]:
                kept["input"] = parse_arguments("".join(state["json"]),
                                                tool_call_id=str(block.get("id", "")),
                                                name=str(block.get("name", "")))
            if state.get("deltas"):
                kept["deltas"] = state["deltas"]
            self._extra_blocks.append(kept)
            self.emitter.note({"extra_blocks": list(self._extra_blocks)})
            return
        em = self.emitter
        if btype == "tool_use" and em._parts == [""] and block.get("input"):
            em.tool_call(json.dumps(block["input"], ensure_ascii=False))
        if not state["opened"]:
            em.text("") if btype == "text" else em.thinking("")
        em.close_group()
        self._current = None
