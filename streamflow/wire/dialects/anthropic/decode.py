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
* Blocks may overlap on the wire (llama.cpp starts each parallel ``tool_use`` block
  before the previous one stops, and stops them all at the end); UniEvent groups
  never do. The block that started first streams live; one that starts while it is
  open is held, fragments and all, and written as its own group when the open one
  stops (see :mod:`streamflow.wire.dialects._held_groups`) -- groups in the order the
  blocks started, nothing lost; the partial message lists held fragments too. A
  known delta type on the wrong kind of block (``text_delta`` on a ``thinking``
  block...) is a ``ProtocolError``. Blocks still open at ``message_stop`` (a
  ``max_tokens`` cut) are closed there, so cut tool arguments raise
  ``ToolCallArgumentParseError`` in place of their ``.done``.
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

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pydantic import BaseModel
from pydantic_core import from_json

from ....core.errors import ProtocolError, ProviderError
from ....core.events import FinishReason, JSONDict, Usage
from ....core.limits import Limits
from ....core.message import Message
from ...framing.sse import ServerSentEvent
from .._readers import expect_index, expect_obj, expect_str, opt_obj, token_count, wrong
from ..base import Decoder, ErrorFields, load_frame
from . import wire
from ._blocks import BlockMapper
from .wire import parse_event

__all__ = ["FINISH_REASONS", "AnthropicDecoder", "anthropic_usage", "parse_event"]

FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_call",
}
_COUNTERS: Final = ("input_tokens", "output_tokens", "cache_read_input_tokens",
                    "cache_creation_input_tokens")


def anthropic_usage(raw: JSONDict) -> Usage:
    """Map an Anthropic usage object onto :class:`Usage` (raw kept in ``provider``)."""
    inp = token_count(raw, "input_tokens")
    read = token_count(raw, "cache_read_input_tokens")
    made = token_count(raw, "cache_creation_input_tokens")
    prompt = None if inp is None else inp + (read or 0) + (made or 0)
    thoughts = token_count(raw.get("output_tokens_details"), "thinking_tokens")
    return Usage(cached_tokens=read, prompt_tokens=prompt, thoughts_tokens=thoughts,
                 response_tokens=token_count(raw, "output_tokens"), provider=raw,
                 cache_write_tokens=made)


def _index(ev: JSONDict) -> int:
    return expect_index(ev.get("index"), f"anthropic {ev.get('type')} index")


class AnthropicDecoder(Decoder[ServerSentEvent]):
    """Sans-IO decoder of the Anthropic Messages SSE stream (see module doc)."""

    name: ClassVar[str] = "anthropic"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "message_stop"
    provider_name: ClassVar[str] = "anthropic"
    # real classmethods, not staticmethod(...) attributes: mypyc cannot compile those
    @classmethod
    def is_terminator(cls, frame: Any) -> bool:
        return wire.is_terminator(frame)

    @classmethod
    def error_frame(cls, code: int, type: str | None, message: str) -> bytes | None:
        return wire.error_frame(code, type, message)

    @classmethod
    def http_error(cls, payload: Any, headers: Mapping[str, str]) -> ErrorFields:
        return wire.http_error(payload, headers)

    @staticmethod
    def parse_wire(data: str | bytes) -> BaseModel:
        """Validate one payload into its typed wire model (for the ``decode`` operator)."""
        return parse_event(data)

    def __init__(self, *, limits: Limits | None = None, clock: Any = None) -> None:
        super().__init__(limits=limits, clock=clock)
        self._blocks = BlockMapper(self.emitter, self.limits)
        self._started = False
        self._usage: JSONDict = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None

    @property
    def partial(self) -> Message:
        """The message so far, with the fragments of held (overlapping) blocks appended."""
        msg = self.emitter.message
        if not msg.complete:
            msg.items += self._blocks.pending_items()
        return msg

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
        ev = load_frame(frame, "anthropic event")
        if type(ev) is not dict:
            raise ProtocolError("anthropic event is not a JSON object", raw=frame.data)
        kind = ev.get("type")
        if kind == "content_block_delta":  # the per-token event: checks inlined
            index = ev.get("index")
            if type(index) is not int:
                raise wrong("anthropic content_block_delta index", "an integer", index)
            delta = ev.get("delta")
            if type(delta) is not dict:
                raise wrong("anthropic content_block_delta.delta", "a JSON object", delta)
            self._blocks.delta(index, delta)
        elif kind == "ping":
            return
        elif self.emitter.stopped:
            raise ProtocolError(f"anthropic {kind!r} event after message_stop", raw=frame.data)
        elif kind == "content_block_start":
            block = expect_obj(ev.get("content_block"), "anthropic content_block")
            self._blocks.start(_index(ev), block)
        elif kind == "content_block_stop":
            self._blocks.stop(_index(ev))
        elif kind == "message_start":
            self._message_start(expect_obj(ev.get("message"), "anthropic message_start.message"))
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
        for key, value in opt_obj(usage, "anthropic usage").items():
            if value is None:
                continue  # omitted counters keep their earlier value
            if key in _COUNTERS:
                expect_index(value, f"anthropic usage.{key}")
            self._usage[key] = value
        if self._usage:  # a cut from now on keeps the counts reported so far
            self.emitter.counted(anthropic_usage(dict(self._usage)))

    def _message_delta(self, ev: JSONDict) -> None:
        delta = opt_obj(ev.get("delta"), "anthropic message_delta.delta")
        if delta.get("stop_reason") is not None:
            self._stop_reason = expect_str(delta["stop_reason"], "stop_reason")
        if "stop_sequence" in delta:
            self._stop_sequence = expect_str(delta["stop_sequence"], "stop_sequence") or None
        extra = {k: v for k, v in delta.items() if k not in ("stop_reason", "stop_sequence")}
        if extra:
            self.emitter.note(extra)
        self._merge_usage(ev.get("usage"))

    def _finish_message(self, ev: JSONDict) -> None:
        self._blocks.close_all()  # cut short (max_tokens): close what is open
        raw = self._stop_reason
        finish = FINISH_REASONS.get(raw or "", "unknown")
        provider: JSONDict = {"stop_reason": raw, "stop_sequence": self._stop_sequence}
        extra = {k: v for k, v in ev.items() if k != "type"}
        if extra:
            provider["message_stop"] = extra
        self.emitter.stop(anthropic_usage(dict(self._usage)), finish, provider)
