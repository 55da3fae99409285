"""Blocks that overlap on the wire, written as UniEvent groups one after another.

Dialects that number their blocks (Anthropic ``index``, Bedrock
``contentBlockIndex``) may start a block before the one streaming ends -- llama.cpp
streams parallel ``tool_use`` blocks that way and stops them all at the end. UniEvent
groups never interleave, so the block that started first streams live, and a block
that starts while it is open is *held*: its fragments are kept (counted against the
message's :class:`~streamflow.core._budget.Budget`, each held block against ``max_groups``)
until the live block ends. Then the held blocks are written in the order they
started, each as one group -- the fragments as they came, then its ``.done`` when
the block ended meanwhile -- and the first one still open on the wire goes live.
Nothing is held while blocks do not overlap, so that path costs nothing.
"""

from __future__ import annotations

from collections import deque

from ...core.events import ContentItem, join_fragments, kind_and_value
from ._emitter import Emitter, merge_provider


class _Held:
    """One held block: its fragments so far, and whether it ended on the wire."""

    __slots__ = ("ended", "items", "key", "size")

    def __init__(self, key: int) -> None:
        self.key = key
        self.items: list[ContentItem] = []
        self.size = 0
        self.ended = False


class HeldGroups:
    """The held blocks of one message, in the order they started (see module doc)."""

    __slots__ = ("_by_key", "_em", "_queue")

    def __init__(self, em: Emitter) -> None:
        self._em = em
        self._queue: deque[_Held] = deque()
        self._by_key: dict[int, _Held] = {}

    def __bool__(self) -> bool:
        return bool(self._queue)

    def holds(self, key: int) -> bool:
        """True while the block ``key`` is held (open on the wire, or ended and unwritten)."""
        return key in self._by_key

    def hold(self, key: int) -> None:
        """Hold the block ``key``, which started while another block streams."""
        self._em.budget.check_groups(len(self._queue) + 1)
        held = self._by_key[key] = _Held(key)
        self._queue.append(held)

    def put(self, key: int, item: ContentItem) -> None:
        """Keep one fragment of the held block ``key``."""
        held = self._by_key[key]
        kind, value = kind_and_value(item)
        size = len(value)
        self._em.budget.reserve(size, held.size + size if kind == "tool_call" else 0)
        held.size += size
        held.items.append(item)

    def end(self, key: int) -> None:
        """The held block ``key`` ended on the wire (its group is written in its turn)."""
        self._by_key[key].ended = True

    def release(self) -> int | None:
        """The live block ended: write the held blocks in turn. Returns the key of the
        first one still open on the wire (live from now on), or ``None``."""
        em = self._em
        while self._queue:
            held = self._queue.popleft()
            del self._by_key[held.key]
            em.budget.release(held.size)
            em.close_group()
            for item in held.items:
                em.delta(item)
            if not held.ended:
                return held.key
            em.close_group()
        return None

    def pending_items(self) -> list[ContentItem]:
        """The held blocks as unfinished ``.delta`` items (for a partial message)."""
        out: list[ContentItem] = []
        for held in self._queue:
            if not held.items:
                continue
            first = held.items[0]
            item = join_fragments(first, [kind_and_value(i)[1] for i in held.items], done=False)
            fidelity = None
            provider = None
            for part in held.items:
                if part.fidelity:
                    fidelity = {**fidelity, **part.fidelity} if fidelity else part.fidelity
                provider = merge_provider(provider, part.provider)
            item.fidelity, item.provider = fidelity, provider
            out.append(item)
        return out
