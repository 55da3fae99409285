"""Encoders ``uni`` and ``uni-jsonl``: UniEvents as their own JSON, exactly.

Each event is one frame of :meth:`UniEvent.to_dict` (bytes as base64), as a
data-only SSE event (``uni``) or one JSON line (``uni-jsonl``). A failed stream
ends with ``{"error": {...}}`` (:meth:`StreamflowError.to_dict`), which the ``uni``
decoders raise again as the same typed error. Nothing is lost: this is the dialect
for streamflow talking to streamflow.
"""

from __future__ import annotations

import base64
import json
from typing import Any, ClassVar

from ....core.errors import StreamflowError
from ....core.events import UniEvent
from .._frames_out import sse_data, text_bytes
from ..encoder import Encoder

__all__ = ["UniEncoder", "UniJSONLEncoder", "encode_jsonl", "encode_sse", "to_json"]


def _default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def to_json(item: UniEvent | StreamflowError) -> str:
    """The JSON text of an event, or ``{"error": {...}}`` for a stream's final error."""
    obj = {"error": item.to_dict()} if isinstance(item, StreamflowError) else item.to_dict()
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_default)


def encode_jsonl(item: UniEvent | StreamflowError) -> bytes:
    """One JSON line (``uni-jsonl``)."""
    return text_bytes(to_json(item)) + b"\n"


def encode_sse(item: UniEvent | StreamflowError) -> bytes:
    """One data-only SSE event (``uni``)."""
    return sse_data(text_bytes(to_json(item)), checked=True)


class UniEncoder(Encoder):
    """UniEvents as data-only SSE (``uni``)."""

    name: ClassVar[str] = "uni"
    carries_choices: ClassVar[bool] = True
    frame = staticmethod(encode_sse)

    def encode_event(self, event: UniEvent) -> bytes:
        return self.frame(event)

    def encode_error(self, error: StreamflowError) -> bytes:
        return self.frame(error)


class UniJSONLEncoder(UniEncoder):
    """UniEvents as JSON lines (``uni-jsonl``)."""

    name: ClassVar[str] = "uni-jsonl"
    media_type: ClassVar[str] = "application/x-ndjson"
    frame = staticmethod(encode_jsonl)
