"""Dialects ``bedrock`` (ConverseStream) and ``bedrock-invoke`` (InvokeModelWithResponseStream).

Both read the AWS binary event-stream framing (:mod:`streamflow.framing.eventstream`);
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
:mod:`streamflow.dialects.bedrock_invoke.decode`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import IncompleteStreamError, ProtocolError, ProviderError
from ...events import FinishReason, InlineDataItem, InlineThinkingItem, JSONDict, Usage
from ...framing.eventstream import EventStreamMessage
from ..base import Decoder, expect_obj, expect_str, load_json
from ..wire_values import b64_field, token_count
from . import wire
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
_PADDING = "p"


def bedrock_usage(raw: JSONDict) -> Usage:
    """Map a Bedrock ``TokenUsage`` object onto :class:`Usage` (raw kept in ``provider``)."""
    if type(raw) is not dict:
        raise ProtocolError("bedrock usage is not a JSON object")
    inp = token_count(raw, "inputTokens")
    read = token_count(raw, "cacheReadInputTokens")
    write = token_count(raw, "cacheWriteInputTokens")
    prompt = None if inp is None else inp + (read or 0) + (write or 0)
    return Usage(cached_tokens=read, prompt_tokens=prompt, thoughts_tokens=None,
                 response_tokens=token_count(raw, "outputTokens"), provider=raw,
                 cache_write_tokens=write)


def event_payload(frame: EventStreamMessage) -> JSONDict:
    """The JSON object of an event's payload, without its random ``p`` padding."""
    body = load_json(frame.payload or b"{}", f"bedrock {frame.event_type} event")
    if type(body) is not dict:
        raise ProtocolError("bedrock event payload is not a JSON object", raw=frame.payload)
    body.pop(_PADDING, None)
    return body


def raise_exception_frame(frame: EventStreamMessage) -> None:
    """Raise the :class:`ProviderError` an ``exception``/``error`` message reports."""
    headers = frame.headers
    if frame.message_type == "error":
        code = str(headers.get(":error-code", "") or "")
        raise ProviderError(str(headers.get(":error-message", "") or code or "bedrock error"),
                            code=code or None, type=code or None, body=dict(headers))
    try:
        body = load_json(frame.payload or b"{}", "bedrock exception")
    except ProtocolError:
        body = frame.payload.decode("utf-8", "replace")
    raw_type = str(headers.get(":exception-type", "") or "")
    message = body.get("message") or body.get("Message") if isinstance(body, dict) else body
    status = body.get("originalStatusCode") if isinstance(body, dict) else None
    raise ProviderError(str(message or raw_type or "bedrock exception"),
                        code=status if isinstance(status, int) else None,
                        type=raw_type[:1].upper() + raw_type[1:] or None,
                        body={"exception_type": raw_type, "payload": body})



def _index(ev: JSONDict) -> int:
    index = ev.get("contentBlockIndex")
    if type(index) is not int:
        raise ProtocolError(f"bedrock contentBlockIndex must be an integer, got {index!r:.40}")
    return index

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
        self._stop: JSONDict | None = None
        self._metadata: JSONDict | None = None

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
            self._delta(_index(ev), expect_obj(ev.get("delta"), "delta"))
        elif kind == "contentBlockStart":
            self._start(_index(ev), expect_obj(ev.get("start"), "start"))
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
        if type(index) is not int or index in self._closed:
            raise ProtocolError(f"bedrock event for content block {index!r}, which is closed")
        state = self._blocks.get(index)
        if state is None:  # text and reasoning blocks have no contentBlockStart
            state = self._blocks[index] = {"kind": "group"}
        if state["kind"] == "group" and index != self._current:
            self.emitter.close_group()
            self._current = index
        return state

    def _start(self, index: int, start: JSONDict) -> None:
        if index in self._blocks or index in self._closed:
            raise ProtocolError(f"bedrock content block {index} started twice")
        state = self._block(index)
        tool = start.get("toolUse")
        if tool is not None:
            state["tool"] = True
            extra = {k: v for k, v in tool.items() if k not in ("toolUseId", "name")}
            self.emitter.tool_call("", expect_str(tool.get("name"), "toolUse.name"),
                                   expect_str(tool.get("toolUseId"), "toolUse.toolUseId"),
                                   extra or None, new=True)
        elif "image" in start:
            image = expect_obj(start["image"] or {}, "image")
            fmt = expect_str(image.get("format"), "image.format")
            state["mime"] = f"image/{fmt}" if fmt else "application/octet-stream"
        else:  # toolResult, or a block type added later: kept whole
            state["kind"] = "extra"
            state["block"] = {"index": index, "start": start, "deltas": []}
            if self._current == index:
                self._current = None

    def _delta(self, index: int, delta: JSONDict) -> None:
        state = self._block(index)
        if state["kind"] == "extra":
            state["block"]["deltas"].append(delta)
            return
        em = self.emitter
        for key, value in delta.items():
            if key == "text":
                em.text(expect_str(value, "delta.text"))
            elif key == "toolUse":
                if not state.get("tool"):
                    raise ProtocolError(f"toolUse delta for block {index}, which is no tool call")
                em.tool_call(expect_str(value.get("input"), "toolUse.input"))
            elif key == "reasoningContent":
                self._reasoning(value)
            elif key == "citation":
                em.text("", {"citations": [value]})
            elif key == "image":
                source = value.get("source") or {}
                extra = {k: v for k, v in value.items() if k != "source"} or None
                em.delta(InlineDataItem("inline_data.delta", b64_field(source.get("bytes", ""),
                         "image bytes"), state.get("mime", "application/octet-stream"),
                         None, extra))
            else:
                self._unknown_delta(state, {key: value})

    def _reasoning(self, value: JSONDict) -> None:
        em = self.emitter
        for key, part in value.items():
            if key == "text":
                em.thinking(expect_str(part, "reasoningContent.text"))
            elif key == "signature":
                em.thinking("", {"signature": expect_str(part, "reasoningContent.signature")})
            elif key == "redactedContent":
                em.delta(InlineThinkingItem("inline_thinking.delta",
                                            b64_field(part, "redactedContent"), None,
                                            {"block_type": "redactedContent"}))
            else:
                em.thinking("", None, {"unknown_deltas": [{"reasoningContent": {key: part}}]})

    def _unknown_delta(self, state: JSONDict, delta: JSONDict) -> None:
        extra = {"unknown_deltas": [delta]}
        em = self.emitter
        if state.get("tool"):
            em.tool_call("", provider=extra)
        elif em.open_kind == "thinking":
            em.thinking("", None, extra)
        elif em.open_kind == "inline_thinking":
            em.delta(InlineThinkingItem("inline_thinking.delta", b"", None, extra))
        else:
            em.text("", extra)

    def _stop_block(self, index: int) -> None:
        state = self._block(index)
        del self._blocks[index]
        self._closed.add(index)
        if state["kind"] == "extra":
            self.emitter.keep("extra_blocks", state["block"])
            return
        self.emitter.close_group()
        self._current = None

    # -- message level --------------------------------------------------------
    def _message_stop(self, ev: JSONDict) -> None:
        if self._stop is not None:
            raise ProtocolError("bedrock messageStop arrived twice")
        self._stop = ev
        self.emitter.close_group()
        self._current = None
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
            usage = bedrock_usage(meta.get("usage") or {})
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
