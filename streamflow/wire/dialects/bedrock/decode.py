"""Dialects ``bedrock`` (ConverseStream) and ``bedrock-invoke`` (InvokeModelWithResponseStream).

Both read the AWS binary event-stream framing (:mod:`streamflow.wire.framing.eventstream`);
the ``:event-type`` header names each event and the payload is JSON.

``bedrock`` maps ConverseStream onto UniEvent:

* ``contentBlockDelta`` ``text`` -> ``text``; ``toolUse.input`` -> ``tool_call``
  fragments (name and id from the block's ``contentBlockStart``);
  ``reasoningContent.text`` -> ``thinking``, ``reasoningContent.signature`` -> a
  ``thinking.delta`` with ``thinking=""`` and ``fidelity={"signature": ...}``,
  ``reasoningContent.redactedContent`` (base64) -> ``inline_thinking`` bytes;
  ``citation`` -> an empty ``text.delta`` with ``provider={"citations": [...]}``;
  ``image`` -> ``inline_data`` (``image/<format>``). ``toolResult`` blocks (server
  tools) and unknown blocks are kept whole in the message ``provider["extra_blocks"]``;
  unknown delta keys ride on an empty fragment as ``provider["unknown_deltas"]``,
  unknown events in ``provider["unknown_events"]``. The ``p`` field every payload
  carries is random padding and is the one thing not kept.
* Blocks may overlap (``contentBlockIndex`` says which one a delta belongs to); UniEvent
  groups never do: a block that starts while another is open is held and written as
  its own group when that one stops (:mod:`streamflow.wire.dialects._held_groups`); blocks
  still open at ``messageStop`` are closed there, in their order.
* ``messageStop.stopReason``: ``end_turn``/``stop_sequence`` -> ``stop``,
  ``max_tokens``/``model_context_window_exceeded`` -> ``length``, ``tool_use`` ->
  ``tool_call``, anything else (``guardrail_intervened``, ``content_filtered``...)
  -> ``unknown``; the raw reason and ``additionalModelResponseFields`` go to the
  stop event's ``provider``.
* The stop event is emitted when ``metadata`` (usage, metrics, trace) follows
  ``messageStop``; when the body ends after ``messageStop`` without ``metadata``,
  :meth:`close` emits it with unknown usage. No ``messageStop`` -> incomplete.
  ``prompt_tokens`` = ``inputTokens + cacheReadInputTokens + cacheWriteInputTokens``
  (the whole prompt), ``cached_tokens`` = ``cacheReadInputTokens``; the raw usage is
  kept in ``usage_metadata.provider``.
* ``:message-type: exception`` -> :class:`ProviderError` with ``type`` the
  ``:exception-type`` capitalised as AWS names the error (``ThrottlingException``),
  ``code`` the ``originalStatusCode`` when given; ``:message-type: error`` ->
  ``ProviderError`` from ``:error-code``/``:error-message``.

``bedrock-invoke`` (InvokeModelWithResponseStream) lives in
:mod:`streamflow.wire.dialects.bedrock_invoke.decode`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....core.errors import IncompleteStreamError, ProtocolError
from ....core.events import (
    ContentItem,
    FinishReason,
    JSONDict,
    ToolCallItem,
    Usage,
)
from ....core.message import Message
from ...framing.eventstream import EventStreamMessage
from .._held_groups import HeldGroups
from .._readers import expect_index, expect_obj, expect_str, opt_obj, token_count
from ..base import Decoder
from . import wire
from ._deltas import delta_items
from ._frames import event_payload, raise_exception_frame
from .wire import parse_event

__all__ = [
    "FINISH_REASONS",
    "BedrockDecoder",
    "bedrock_usage",
    "event_payload",
    "parse_event",
    "raise_exception_frame",
]

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_call",
}
CONVERSE_EVENTS = frozenset({"messageStart", "contentBlockStart", "contentBlockDelta",
                             "contentBlockStop", "messageStop", "metadata"})


def bedrock_usage(raw: JSONDict) -> Usage:
    """Map a Bedrock ``TokenUsage`` object onto :class:`Usage` (raw kept in ``provider``)."""
    expect_obj(raw, "bedrock usage")
    inp = token_count(raw, "inputTokens")
    read = token_count(raw, "cacheReadInputTokens")
    write = token_count(raw, "cacheWriteInputTokens")
    prompt = None if inp is None else inp + (read or 0) + (write or 0)
    return Usage(cached_tokens=read, prompt_tokens=prompt, thoughts_tokens=None,
                 response_tokens=token_count(raw, "outputTokens"), provider=raw,
                 cache_write_tokens=write)


def _index(ev: JSONDict) -> int:
    return expect_index(ev.get("contentBlockIndex"), "bedrock contentBlockIndex")


class BedrockDecoder(Decoder[EventStreamMessage]):
    """Sans-IO decoder of Bedrock ConverseStream (see module doc)."""

    name: ClassVar[str] = "bedrock"
    framing: ClassVar[str] = "eventstream"
    terminator: ClassVar[str] = "messageStop"
    provider_name: ClassVar[str] = "aws.bedrock"
    is_terminator = staticmethod(wire.is_terminator)
    error_frame = staticmethod(wire.error_frame)
    http_error = staticmethod(wire.http_error)
    parse_wire = staticmethod(parse_event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._blocks: dict[int, JSONDict] = {}
        self._closed: set[int] = set()
        self._current: int | None = None
        self._held = HeldGroups(self.emitter)  # blocks that started while another streams
        self._stop: JSONDict | None = None
        self._metadata: JSONDict | None = None

    @property
    def partial(self) -> Message:
        """The message so far, with the fragments of held (overlapping) blocks appended."""
        msg = self.emitter.message
        if not msg.complete and self._held:
            msg.items += self._held.pending_items()
        return msg

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A ConverseStream event (or an exception, which any Bedrock stream may open with)."""
        return isinstance(frame, EventStreamMessage) and (
            frame.event_type in CONVERSE_EVENTS or frame.message_type in ("exception", "error"))

    def handle(self, frame: EventStreamMessage) -> None:
        """Map one event-stream message."""
        if frame.message_type in ("exception", "error"):
            raise_exception_frame(frame)
        kind = frame.event_type
        ev = event_payload(frame)
        if self.emitter.stopped:
            raise ProtocolError(f"bedrock {kind!r} event after the stream stopped",
                                raw=frame.payload)
        if kind == "contentBlockDelta":
            self._delta(_index(ev), expect_obj(ev.get("delta"), "bedrock delta"))
        elif kind == "contentBlockStart":
            self._start(_index(ev), expect_obj(ev.get("start"), "bedrock start"))
        elif kind == "contentBlockStop":
            self._stop_block(_index(ev))
        elif kind == "messageStart":
            self.emitter.note(ev)
        elif kind == "messageStop":
            self._message_stop(ev)
        elif kind == "metadata":
            self._metadata = ev
            self._maybe_stop()
        else:
            self.emitter.keep("unknown_events", {"event_type": kind, "payload": ev})

    # -- blocks ---------------------------------------------------------------
    def _block(self, index: int) -> JSONDict:
        if index in self._closed:
            raise ProtocolError(f"bedrock event for content block {index!r}, which is closed")
        state = self._blocks.get(index)
        if state is None:  # text and reasoning blocks have no contentBlockStart
            state = self._blocks[index] = {"kind": "group", "last": ""}
            if self._current is None:
                self.emitter.close_group()
                self._current = index
            else:  # overlapping blocks: this one is written when the open one ends
                self._held.hold(index)
        return state

    def _out(self, index: int, state: JSONDict, item: ContentItem) -> None:
        """One fragment of block ``index``: written when its group is open, else held."""
        state["last"] = item.kind
        if index == self._current:
            self.emitter.delta(item)
        else:
            self._held.put(index, item)

    def _start(self, index: int, start: JSONDict) -> None:
        if index in self._blocks or index in self._closed:
            raise ProtocolError(f"bedrock content block {index} started twice")
        tool = start.get("toolUse")
        if tool is None and "image" not in start:  # toolResult, or a later type: kept whole
            self._blocks[index] = {"kind": "extra",
                                   "block": {"index": index, "start": start, "deltas": []}}
            return
        state = self._block(index)
        if tool is not None:
            tool = expect_obj(tool, "bedrock toolUse")
            state["tool"] = True
            extra = {k: v for k, v in tool.items() if k not in ("toolUseId", "name")}
            self._out(index, state, ToolCallItem(
                "tool_call.delta", expect_str(tool.get("name"), "toolUse.name"),
                expect_str(tool.get("toolUseId"), "toolUse.toolUseId"), "", None,
                extra or None))
        else:
            image = opt_obj(start["image"], "bedrock image")
            fmt = expect_str(image.get("format"), "image.format")
            state["mime"] = f"image/{fmt}" if fmt else "application/octet-stream"

    def _delta(self, index: int, delta: JSONDict) -> None:
        state = self._block(index)
        if state["kind"] == "extra":
            state["block"]["deltas"].append(delta)
            return
        for item in delta_items(index, state, delta):  # lazily: each sees the last kind
            self._out(index, state, item)

    def _stop_block(self, index: int) -> None:
        state = self._block(index)
        del self._blocks[index]
        self._closed.add(index)
        if state["kind"] == "extra":
            self.emitter.keep("extra_blocks", state["block"])
            return
        if index != self._current:
            self._held.end(index)  # its group is written when its turn comes
            return
        self.emitter.close_group()
        self._current = self._held.release() if self._held else None

    # -- message level --------------------------------------------------------
    def _message_stop(self, ev: JSONDict) -> None:
        if self._stop is not None:
            raise ProtocolError("bedrock messageStop arrived twice")
        self._stop = ev
        while self._current is not None:  # blocks left open: closed in their order
            self._stop_block(self._current)
        self.emitter.close_group()
        self._maybe_stop()

    def _maybe_stop(self, at_close: bool = False) -> None:
        stop, meta = self._stop, self._metadata
        if stop is None or (meta is None and not at_close):
            return
        raw = stop.get("stopReason")
        provider: JSONDict = {"stop_reason": raw}
        provider.update({k: v for k, v in stop.items() if k != "stopReason"})
        usage = None
        if meta is not None:
            usage = bedrock_usage(opt_obj(meta.get("usage"), "bedrock usage"))
            provider.update({k: v for k, v in meta.items() if k != "usage"})
        self.emitter.stop(usage, FINISH_REASONS.get(expect_str(raw, "stopReason"), "unknown"),
                          provider)

    def finish(self) -> None:
        """End of body: after ``messageStop``, emit the stop (usage unknown without metadata)."""
        if self.emitter.stopped:
            return
        if self._stop is None:
            raise IncompleteStreamError("bedrock stream ended without messageStop")
        if self.cut:  # the body ended inside the last frame: the metadata (usage) was cut
            raise IncompleteStreamError("bedrock stream was cut inside its last frame "
                                        "(the metadata event with the usage)")
        self._maybe_stop(at_close=True)
