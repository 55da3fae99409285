"""Dialect ``bedrock-invoke``: Bedrock InvokeModelWithResponseStream (AWS event-stream framing).

Each ``chunk`` event's payload is ``{"bytes": <base64>}``, the base64 of one native
event of the model. The native event is handed to the native dialect's decoder as
a synthetic :class:`~streamflow.wire.framing.sse.ServerSentEvent`, sharing its emitter,
so the UniEvents are exactly those of that dialect (finish reasons, usage, the
``amazon-bedrock-invocationMetrics`` Bedrock appends to the last event, kept in the
stop event's ``provider["message_stop"]``). Anthropic (Claude) models are decoded;
another native event shape raises :class:`ProtocolError` naming its keys. Exception
messages map as in :mod:`streamflow.wire.dialects.bedrock.decode`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....core.errors import ProtocolError
from ....core.message import Message
from ...framing.eventstream import EventStreamMessage
from ...framing.sse import ServerSentEvent
from .._readers import b64_field
from ..anthropic.decode import AnthropicDecoder
from ..base import Decoder, load_json
from ..bedrock import wire as bedrock_wire
from ..bedrock._frames import event_payload, raise_exception_frame
from ..bedrock.wire import parse_event

__all__ = ["BedrockInvokeDecoder"]


class BedrockInvokeDecoder(Decoder[EventStreamMessage]):
    """InvokeModelWithResponseStream: ``chunk`` events carrying a native model event."""

    name: ClassVar[str] = "bedrock-invoke"
    framing: ClassVar[str] = "eventstream"
    terminator: ClassVar[str] = "the native model's end event"
    provider_name: ClassVar[str] = "aws.bedrock"
    error_frame = staticmethod(bedrock_wire.error_frame)
    http_error = staticmethod(bedrock_wire.http_error)
    parse_wire = staticmethod(parse_event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._native: Decoder = AnthropicDecoder(limits=self.limits, clock=self._clock)
        self.emitter = self._native.emitter  # one message, written by the native decoder

    @property
    def partial(self) -> Message:
        """The native decoder's partial message (held blocks included)."""
        return self._native.partial

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A ``chunk`` event."""
        return isinstance(frame, EventStreamMessage) and frame.event_type == "chunk"

    def handle(self, frame: EventStreamMessage) -> None:
        """Decode the chunk's base64 ``bytes`` and feed the native event to its decoder."""
        if frame.message_type in ("exception", "error"):
            raise_exception_frame(frame)
        ev = event_payload(frame)
        if frame.event_type != "chunk":
            raise ProtocolError(f"bedrock-invoke: unexpected event {frame.event_type!r}",
                                raw=frame.payload)
        native = b64_field(ev.get("bytes"), "chunk.bytes")
        obj = load_json(native, "bedrock-invoke chunk")
        if type(obj) is not dict or not isinstance(obj.get("type"), str):
            keys = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
            raise ProtocolError(f"bedrock-invoke: unsupported native event shape ({keys}); "
                                "only Anthropic models are decoded", raw=native)
        self._native.handle(ServerSentEvent(native.decode("utf-8", "replace"), obj["type"]))

    def finish(self) -> None:
        """The native decoder decides whether its stream ended."""
        self._native.finish()
