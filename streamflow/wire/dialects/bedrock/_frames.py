"""The envelope of a Bedrock eventstream message: its JSON payload or the error it reports.

Shared by the ``bedrock`` (Converse) and ``bedrock-invoke`` decoders, re-exported by
:mod:`streamflow.wire.dialects.bedrock.decode`.
"""

from __future__ import annotations

from ....core.errors import ProtocolError, ProviderError
from ....core.events import JSONDict
from ...framing.eventstream import EventStreamMessage
from ..base import load_json

_PADDING = "p"


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
