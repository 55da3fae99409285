"""Per-candidate state of a Gemini stream: where its items go, and what is open.

Candidate 0 writes straight to the :class:`~streamflow.wire.dialects.base.Emitter`; the
others hold their items (``None`` marks a group end) until the decoder emits them
after candidate 0, counting their size against ``max_message_bytes`` meanwhile.
"""

from __future__ import annotations

from ....core.errors import LimitExceededError
from ....core.events import ContentItem, JSONDict
from ....core.limits import Limits
from ..base import Emitter
from ._args import ArgsWriter


class Candidate:
    """One candidate's state; its items go to the emitter (candidate 0) or are held."""

    __slots__ = (
        "after",
        "calls",
        "em",
        "finish",
        "groups",
        "head",
        "held",
        "index",
        "limits",
        "meta",
        "mime",
        "open",
        "sig",
        "size",
        "writer",
    )

    def __init__(self, index: int, em: Emitter | None, limits: Limits) -> None:
        self.index = index
        self.em = em
        self.held: list[ContentItem | None] = []  # None closes a group
        self.size = 0
        self.limits = limits
        self.open = ""          # kind of the open group
        self.sig = False        # the open group carries a signature
        self.mime = ""
        self.calls = 0
        self.writer: ArgsWriter | None = None
        self.head = ("", "")    # name and id of the call that streams
        self.after: list[JSONDict] = []  # parts that came while a call streamed
        self.finish: str | None = None
        self.groups = 0
        self.meta: JSONDict = {}

    def put(self, item: ContentItem, new: bool = False) -> None:
        """Emit (or hold) one fragment, starting a new group when asked or the kind changes."""
        if new or item.kind != self.open:
            self.close()
            self.open = item.kind
            self.groups += 1
            if self.index:
                item.provider = {**(item.provider or {}), "candidate_index": self.index}
        if item.fidelity:
            self.sig = True
        if self.em is not None:
            self.em.delta(item)
            return
        self.size += len(getattr(item, item.growing))
        if self.size > self.limits.max_message_bytes:
            raise LimitExceededError("max_message_bytes", self.limits.max_message_bytes)
        self.held.append(item)

    def close(self) -> None:
        """Close the open group."""
        if self.open:
            if self.em is not None:
                self.em.close_group()
            else:
                self.held.append(None)
        self.open, self.sig = "", False
