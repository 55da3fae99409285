"""Dialect ``anthropic``: the Anthropic Messages stream (and GLM/compatible servers).

Mapping onto UniEvent:

* ``text`` / ``thinking`` blocks -> ``text`` / ``thinking`` groups; ``signature_delta``
  -> a ``thinking.delta`` with ``thinking=""`` and ``fidelity={"signature": ...}``;
  ``citations_delta`` -> a ``text.delta`` with ``text=""`` and
  ``provider={"citations": [...]}`` (the ``.done`` item lists them all). A block that
  ends without any content still makes a group (one empty fragment, then ``.done``).
* ``redacted_thinking`` -> one ``inline_thinking`` group; ``data`` is the opaque
  string's UTF-8 bytes.
* ``tool_use`` -> a ``tool_call`` group; the first fragment carries name and id (and
  empty arguments), each ``input_json_delta`` is one fragment; an ``input`` given
  whole in ``content_block_start`` (no deltas) is sent as one fragment.
* ``server_tool_use``, ``*_tool_result`` and unknown block types are not for the
  client to act on: each is kept whole (its JSON input assembled, counted against
  ``max_tool_arguments_bytes`` and parsed; when it does not parse, the raw text is
  kept as ``input_json``) in the message ``provider["extra_blocks"]`` with its
  ``index``.
* Unknown delta types ride on an empty fragment of their block as
  ``provider={"unknown_deltas": [...]}`` (on a kept block: in its ``deltas``);
  unknown event types are kept in ``provider["unknown_events"]``. Nothing crashes,
  nothing is dropped.
* Blocks stream one after another: a block starting while another text, thinking,
  tool or redacted block is open, or a known delta type on the wrong kind of block
  (``text_delta`` on a ``thinking`` block...), is a ``ProtocolError``. Blocks still
  open at ``message_stop`` (a ``max_tokens`` cut) are closed there, so cut tool
  arguments raise ``ToolCallArgumentParseError`` in place of their ``.done``.
* ``message_delta`` may repeat; its usage is cumulative and read at the end (a
  counter it omits keeps its ``message_start`` value). ``prompt_tokens`` is
  ``input_tokens + cache_read + cache_creation`` (the whole prompt, as OpenAI counts
  it); ``cached_tokens`` is ``cache_read_input_tokens``; ``thoughts_tokens`` is
  ``output_tokens_details.thinking_tokens`` when sent; the raw usage (with GLM's
  ``server_tool_use``, ``service_tier``...) stays in ``usage_metadata.provider``.
* ``end_turn``/``stop_sequence`` -> ``stop``; ``max_tokens`` and
  ``model_context_window_exceeded`` -> ``length``; ``tool_use`` -> ``tool_call``;
  anything else (``refusal``, ``pause_turn``, none) -> ``unknown``. The stop event's
  ``provider`` has the raw ``stop_reason`` and ``stop_sequence``; other
  ``message_delta.delta`` fields (``stop_details``, ``container``) and the
  ``message_start`` envelope (``id``, ``model``...) are in the message provider slot.
* An ``error`` event raises ``ProviderError`` (its ``type``, ``message``, and the raw
  event as ``body``) with the partial message; a second ``message_start`` or any
  event but ``ping`` after ``message_stop`` is a ``ProtocolError``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic_core import from_json

from ..errors import LimitExceededError, ProtocolError, ProviderError
from ..events import (
    FinishReason,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    Usage,
)
from ..framing.sse import ServerSentEvent
from .anthropic_wire import parse_event
from .base import Decoder, expect_obj, expect_str, load_json

__all__ = ["FINISH_REASONS", "AnthropicDecoder", "anthropic_usage", "parse_event"]

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_call",
}
_GROUP_BLOCKS = ("text", "thinking", "tool_use", "redacted_thinking")
_DELTA_BLOCK = {"text_delta": "text", "citations_delta": "text", "thinking_delta": "thinking",
                "signature_delta": "thinking", "input_json_delta": "tool_use"}
_COUNTERS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
             "cache_creation_input_tokens")


def anthropic_usage(raw: JSONDict) -> Usage:
    """Map an Anthropic usage object onto :class:`Usage` (raw kept in ``provider``)."""
    inp = raw.get("input_tokens")
    read = raw.get("cache_read_input_tokens")
    made = raw.get("cache_creation_input_tokens")
    prompt = None if inp is None else inp + (read or 0) + (made or 0)
    details = raw.get("output_tokens_details")
    thoughts = details.get("thinking_tokens") if isinstance(details, dict) else None
    return Usage(cached_tokens=read, prompt_tokens=prompt,
                 thoughts_tokens=thoughts if type(thoughts) is int else None,
                 response_tokens=raw.get("output_tokens"), provider=raw)


def _opt_obj(value: Any, what: str) -> JSONDict:
    return {} if value is None else _obj(value, what)


def _obj(value: Any, what: str) -> JSONDict:
    return value if type(value) is dict else expect_obj(value, f"anthropic {what}")


def _index(ev: JSONDict) -> int:
    index = ev.get("index")
    if type(index) is not int:
        raise ProtocolError(f"anthropic {ev.get('type')} index must be an integer, got {index!r}")
    return index


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
        self._started = False
        self._usage: JSONDict = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """An Anthropic stream opens with ``message_start``, ``ping`` or an ``error`` object."""
        event = getattr(frame, "event", "message")
        if event in ("message_start", "ping"):
            return True
        head = "".join(str(getattr(frame, "data", ""))[:64].split())
        if head.startswith(('{"type":"message_start"', '{"type":"ping"')):
            return True
        if event == "error" or head.startswith('{"type":"error","error":{'):
            try:
                ev = from_json(frame.data)
            except ValueError:
                return False
            return (type(ev) is dict and ev.get("type") == "error"
                    and type(ev.get("error")) is dict and "sequence_number" not in ev)
        return False

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one SSE event (its JSON ``type`` decides, not the ``event:`` line)."""
        ev = load_json(frame.data, "anthropic event")
        if type(ev) is not dict:
            raise ProtocolError("anthropic event is not a JSON object", raw=frame.data)
        kind = ev.get("type")
        if kind == "content_block_delta":  # the per-token event: checks inlined
            index = ev.get("index")
            if type(index) is not int:
                index = _index(ev)  # raises
            delta = ev.get("delta")
            if type(delta) is not dict:
                delta = _obj(delta, "content_block_delta.delta")  # raises
            self._delta(index, delta)
        elif kind == "ping":
            return
        elif self.emitter.stopped:
            raise ProtocolError(f"anthropic {kind!r} event after message_stop", raw=frame.data)
        elif kind == "content_block_start":
            self._start(_index(ev), _obj(ev.get("content_block"), "content_block"))
        elif kind == "content_block_stop":
            self._stop_block(_index(ev))
        elif kind == "message_start":
            self._message_start(_obj(ev.get("message"), "message_start.message"))
        elif kind == "message_delta":
            self._message_delta(ev)
        elif kind == "message_stop":
            self._finish_message(ev)
        elif kind == "error":
            err = ev.get("error")
            info = err if type(err) is dict else {"message": err}
            message = info.get("message")
            etype = info.get("type")
            request_id = ev.get("request_id")
            raise ProviderError(str(message or err or "anthropic stream error"),
                                type=etype if type(etype) is str else None,
                                request_id=request_id if type(request_id) is str else None,
                                body=ev)
        else:
            self.emitter.keep("unknown_events", ev)

    # -- message level --------------------------------------------------------
    def _message_start(self, message: JSONDict) -> None:
        if self._started:
            raise ProtocolError("anthropic message_start twice in one stream")
        self._started = True
        expect_str(message.get("id"), "message.id")
        expect_str(message.get("model"), "message.model")
        meta = {k: v for k, v in message.items()
                if k not in ("content", "usage", "stop_reason", "stop_sequence", "type", "role")}
        self.emitter.note(meta)
        self._merge_usage(message.get("usage"))

    def _merge_usage(self, usage: Any) -> None:
        for key, value in _opt_obj(usage, "usage").items():
            if value is None:
                continue  # omitted counters keep their earlier value
            if key in _COUNTERS and type(value) is not int:
                raise ProtocolError(f"anthropic usage.{key} must be an integer, got {value!r}")
            self._usage[key] = value

    def _message_delta(self, ev: JSONDict) -> None:
        delta = _opt_obj(ev.get("delta"), "message_delta.delta")
        if delta.get("stop_reason") is not None:
            self._stop_reason = expect_str(delta["stop_reason"], "stop_reason")
        if "stop_sequence" in delta:
            self._stop_sequence = expect_str(delta["stop_sequence"], "stop_sequence") or None
        extra = {k: v for k, v in delta.items() if k not in ("stop_reason", "stop_sequence")}
        if extra:
            self.emitter.note(extra)
        self._merge_usage(ev.get("usage"))

    def _finish_message(self, ev: JSONDict) -> None:
        for index in sorted(self._blocks):  # cut short (max_tokens): close what is open
            self._stop_block(index)
        raw = self._stop_reason
        finish = FINISH_REASONS.get(raw or "", "unknown")
        provider: JSONDict = {"stop_reason": raw, "stop_sequence": self._stop_sequence}
        extra = {k: v for k, v in ev.items() if k != "type"}
        if extra:
            provider["message_stop"] = extra
        self.emitter.stop(anthropic_usage(dict(self._usage)), finish, provider)

    # -- blocks ---------------------------------------------------------------
    def _start(self, index: int, block: JSONDict) -> None:
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

    def _delta(self, index: int, delta: JSONDict) -> None:
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
        expected = _DELTA_BLOCK.get(dtype)
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

    def _stop_block(self, index: int) -> None:
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
