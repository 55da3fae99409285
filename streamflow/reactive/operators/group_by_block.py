"""``group_by_block()``: UniEvents -> one :class:`Block` observable per content group.

Marble::

    events:           --t.delta--t.delta--t.done--tc.delta--tc.done--stop--|
    group_by_block(): --B0---------------------------B1-------------------|
    B0:                 --t.delta--t.delta--t.done|
    B1:                                              --tc.delta--tc.done|

A UI subscribes per block (a text pane, a thinking fold, a card per tool call).
Each block is emitted before its first item, so a subscriber attached inside the
outer ``on_next`` sees every item live.

**Late subscribers never lose items**: a block keeps its items and replays them to
every subscriber, whenever it subscribes -- while the block is open (then it goes
live) or after it closed (then it also gets the completion or the error). The
buffer lives as long as the Block object; it holds the same fragments the message
does, so memory stays linear. A block whose stream ends without its ``.done``
(e.g. ``take(n)`` upstream) completes with ``done`` left ``None``; an upstream error
reaches the open block and the outer observable. A block subscriber that raises
stops the stream with :class:`~streamflow.SinkError` (``run()`` raises it at once and
closes the request; under a bare ``scope()`` an unhandled one is raised at its exit).

Routing is one stateful operator (the UniEvent grammar says groups never
interleave, so the open group is the only candidate): a fraction of the cost of
``ops.filter`` + ``ops.group_by`` with a group-counting key (``bench/README.md``) --
whose inner observables are also hot and drop items emitted before a subscription.
The stop event belongs to no block; read usage with ``tap_usage`` before this.
"""

from __future__ import annotations

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from ...core.errors import SinkError
from ...core.events import ContentItem, UniEvent, is_done
from ._base import Handlers, Operator, stateful

__all__ = ["Block", "group_by_block"]


class Block(Observable[ContentItem]):
    """One content group: its items (``K.delta``... then ``K.done``), replayed to any subscriber.

    ``index`` counts groups from 0; ``kind`` is ``"text"``, ``"tool_call"``...;
    ``head`` is the first item (a tool call's ``name``/``tool_call_id``); ``done``
    the ``.done`` item once it arrived.
    """

    def __init__(self, index: int, first: ContentItem) -> None:
        super().__init__()
        self.index = index
        self.head = first
        self.kind: str = first.kind
        self.done: ContentItem | None = None
        self.items: list[ContentItem] = []
        self.error: Exception | None = None
        self.closed = False
        self._observers: tuple[abc.ObserverBase[ContentItem], ...] = ()

    def __repr__(self) -> str:
        return f"Block(index={self.index}, kind={self.kind!r}, items={len(self.items)})"

    def _subscribe_core(self, observer: abc.ObserverBase[ContentItem],
                        scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        for item in list(self.items):
            observer.on_next(item)
        if self.closed:
            if self.error is not None:
                observer.on_error(self.error)
            else:
                observer.on_completed()
            return Disposable()
        self._observers += (observer,)

        def unsubscribe() -> None:
            self._observers = tuple(o for o in self._observers if o is not observer)
        return Disposable(unsubscribe)

    def _push(self, item: ContentItem) -> None:
        self.items.append(item)
        for observer in self._observers:
            try:
                observer.on_next(item)
            except Exception as exc:  # a subscriber failed: the stream stops, typed
                raise SinkError([(self, exc)]) from exc

    def _close(self, error: Exception | None = None) -> None:
        """Complete (or fail) every subscriber; a subscriber that fails is a ``SinkError``.

        A subscriber without ``on_error`` re-raises the error it is given (reactivex's
        default): that error goes downstream anyway, so it is not raised again here.
        """
        self.closed = True
        self.error = error
        observers, self._observers = self._observers, ()
        failures: list[tuple[object, BaseException]] = []
        for observer in observers:
            try:
                if error is None:
                    observer.on_completed()
                else:
                    observer.on_error(error)
            except Exception as exc:
                if exc is not error:
                    failures.append((self, exc))
        if failures:
            raise SinkError(failures) from failures[0][1]


def group_by_block() -> Operator[UniEvent, Block]:
    """An operator from UniEvents to one replaying :class:`Block` per content group."""

    def setup(observer: abc.ObserverBase[Block]) -> Handlers:
        current: Block | None = None
        count = 0

        def on_next(event: UniEvent) -> None:
            nonlocal current, count
            items = event.content_items
            if not items:
                return
            item = items[0]
            block = current
            if block is None:
                block = current = Block(count, item)
                count += 1
                observer.on_next(block)
            block._push(item)
            if is_done(item):
                block.done = item
                current = None
                block._close()

        def on_error(error: Exception) -> None:
            try:
                if current is not None:
                    current._close(error)
            finally:
                observer.on_error(error)

        def on_completed() -> None:
            if current is not None:
                current._close()
            observer.on_completed()

        return on_next, on_error, on_completed

    return stateful(setup)
