"""Views over one async stream of UniEvents: text deltas only, or one iterator per block.

Both pull from the same stream as ``async for event in s``; they are classes (not
async generators) so leaving a loop early needs no generator finalisation on
asyncio or trio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ...core.events import ContentItem, TextItem, UniEvent, is_done


async def _next_item(events: AsyncIterator[UniEvent]) -> ContentItem | None:
    """The next content item (the stop event carries none); ``None`` at the end."""
    async for event in events:
        if event.content_items:
            return event.content_items[0]
    return None


class TextStream:
    """``async for text in s.text_stream``: each ``text.delta``'s text."""

    def __init__(self, events: AsyncIterator[UniEvent]) -> None:
        self._events = events

    def __aiter__(self) -> TextStream:
        return self

    async def __anext__(self) -> str:
        while True:
            item = await _next_item(self._events)
            if item is None:
                raise StopAsyncIteration
            if isinstance(item, TextItem) and item.type == "text.delta":
                return item.text


class BlockStream:
    """One content group's items (``K.delta``... then ``K.done``), as an async iterator.

    ``index`` counts groups from 0; ``kind`` is ``"text"``, ``"thinking"``,
    ``"tool_call"``...; ``head`` is the first item (a tool call's ``name`` and
    ``tool_call_id``); ``done`` is the ``.done`` item once it was read. Items not
    read before the next block is asked for are skipped (still in the message).
    """

    def __init__(self, index: int, head: ContentItem, owner: Blocks) -> None:
        self.index = index
        self.head = head
        self.kind: str = head.kind
        self.done: ContentItem | None = None
        self._owner = owner
        self._started = False
        self.closed = False

    def __repr__(self) -> str:
        return f"BlockStream(index={self.index}, kind={self.kind!r})"

    def __aiter__(self) -> BlockStream:
        return self

    async def __anext__(self) -> ContentItem:
        if self.closed:
            raise StopAsyncIteration
        if not self._started:
            self._started = True
            item: ContentItem | None = self.head
        else:
            item = await _next_item(self._owner.events)
        if item is None:
            self.closed = True
            raise StopAsyncIteration
        if is_done(item):
            self.done = item
            self.closed = True
        return item


class Blocks:
    """``async for block in s.blocks()``: one :class:`BlockStream` per content group."""

    def __init__(self, events: AsyncIterator[UniEvent]) -> None:
        self.events = events
        self._current: BlockStream | None = None
        self._count = 0

    def __aiter__(self) -> Blocks:
        return self

    async def __anext__(self) -> BlockStream:
        current = self._current
        while current is not None and not current.closed:  # skip what was not read
            await current.__anext__()
        item = await _next_item(self.events)
        if item is None:
            raise StopAsyncIteration
        self._current = block = BlockStream(self._count, item, self)
        self._count += 1
        return block

