"""The numbering of a Responses stream the encoder writes: events, output items, deltas.

:class:`OutputSequence` gives every event the next ``sequence_number`` and every output
item the next ``output_index``, opens and closes the one open item
(``output_item.added`` / ``output_item.done``) and writes the per-token delta events
from cached bytes. :class:`~streamflow.wire.dialects.openai_responses._output.OutputWriter`
builds each group's events on it.
"""

from __future__ import annotations

from typing import Any

from ....core.events import JSONDict
from .._frames_out import event_head, is_token, json_bytes, sse


class OutputSequence:
    """Numbered events and output items; ``output`` lists the finished ones when ``keep`` is set."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.output: list[JSONDict] = []
        self._seq = 0
        self._index = -1
        self._ids: set[str] = set()           # the ids of the items written so far
        self._item: JSONDict | None = None    # the open output item
        self._fast_key: tuple[Any, ...] = ()
        self._fast = (b"", b"")

    # -- event framing --------------------------------------------------------
    def event(self, kind: str, **fields: Any) -> bytes:
        """One named event with the next ``sequence_number``."""
        data = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return sse(data, kind)

    def delta(self, kind: str, where: JSONDict, text: str, tail: bytes = b"") -> bytes:
        """A delta event (the per-token path): its bytes around the number are cached."""
        key = (kind, *where.values())
        if key != self._fast_key:
            self._fast_key = key
            inner = json_bytes(where)[1:-1]
            self._fast = (event_head(kind) + b'{"type":' + json_bytes(kind)
                          + b',"sequence_number":', b"," + inner + b',"delta":')
        head, middle = self._fast
        seq = self._seq
        self._seq = seq + 1
        return head + str(seq).encode() + middle + json_bytes(text) + tail + b"}\n\n"

    def raw(self, ev: JSONDict) -> bytes:
        """An event kept as it came (renumbered): named by its type when that is a token,
        else data only (the type is read from the JSON)."""
        kind = ev["type"]
        data = {"type": kind, "sequence_number": self._seq,
                **{k: v for k, v in ev.items() if k not in ("type", "sequence_number")}}
        self._seq += 1
        return sse(data, kind if is_token(kind) else None)

    def _at(self) -> JSONDict:
        assert self._item is not None
        return {"item_id": self._item["id"], "output_index": self._index}

    def _open(self, item: JSONDict) -> bytes:
        out = self.close()
        self._index += 1
        self._item = item
        if isinstance(item.get("id"), str):
            self._ids.add(item["id"])
        return out + self.event("response.output_item.added", output_index=self._index,
                                item=item)

    def close(self) -> bytes:
        """Close the open item (``output_item.done``)."""
        item = self._item
        if item is None:
            return b""
        self._item = None
        item["status"] = "completed"
        if item["type"] == "reasoning" and not item.get("encrypted_content"):
            item.pop("encrypted_content", None)
        if self.keep:
            self.output.append(item)
        return self.event("response.output_item.done", output_index=self._index, item=item)

    def wrote(self, item_id: Any) -> bool:
        """True when an item with the id ``item_id`` was written already."""
        return isinstance(item_id, str) and item_id in self._ids

    def whole(self, item: JSONDict) -> bytes:
        """An item written at once (kept server-tool items, images)."""
        out = self._open(item)
        return out + self.close()
