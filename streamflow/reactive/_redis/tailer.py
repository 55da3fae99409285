"""``Tailer``: one shared ``XREAD BLOCK`` over the Redis stream keys a process tails, fanned out.

A web app serving many live answers would otherwise hold one blocked connection per
reader. :class:`~streamflow.servers.web.resume.ResumableStreams` runs one Tailer per app;
:func:`~streamflow.reactive._redis.streams.read_batches` takes it as ``tailer=`` and
checks the order of what it hands out like any other read.

On one Redis every live key is in one ``XREAD``. On a Redis Cluster one command may
only name keys of one slot -- Redis refuses an ``XREAD`` over two slots with
``CROSSSLOT`` even when one node serves both -- so the keys are grouped by slot
(``ResumableStreams`` gives all of one chat's keys one ``{hash tag}``, hence one slot)
and each group has its own ``XREAD BLOCK``, sent by redis-py's routing to the node that
serves the slot now: a slot that moves (a failover, a resharding: ``MOVED``/``ASK``)
takes its group's read with it, and the read waits out a failover
(:class:`~streamflow.reactive._redis.link.RedisLink`). Readers do not count that wait
as the producer's silence.

Memory is bounded per reader: the shared read hands each reader at most ``QUEUE``
batches ahead of what it has taken. A reader that falls further behind (a stalled
client) is dropped from the fan-out, not buffered for; when it reads again it
catches up from Redis by itself, as it did when it joined -- so a slow client costs
Redis reads, never the process's memory, and (the stream's ``MAXLEN`` permitting)
loses nothing.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from ...core.errors import StreamflowError, StreamTimeoutError
from .link import RedisLink
from .streams import (
    BATCH,
    END,
    Entry,
    entry_key,
    parse_entry,
    still_there,
    until_end,
    xread_streams,
)

QUEUE = 4  # batches the shared read holds for one reader before it drops that reader


class Tailer:
    """One ``XREAD BLOCK`` per slot group (one for all keys on one Redis), fanned out.

    Run :meth:`run` in a long-lived task group (``ResumableStreams`` does); readers
    call :meth:`follow`. A reader first catches up by itself (non-blocking reads),
    then takes the live entries the shared read hands it, skipping what it has.
    """

    def __init__(self, link: RedisLink, *, block: float = 0.1) -> None:
        self.link = link
        self.block = block
        self.cursors: dict[str, str] = {}
        self.readers: dict[str, set[MemoryObjectSendStream[Any]]] = {}
        self.groups: dict[int, set[str]] = {}  # slot (0 on one Redis) -> its live keys
        self._reading: set[int] = set()  # the groups whose read runs
        self._changed = anyio.Event()

    async def run(self) -> None:
        """Start a shared read for every group with live keys, until cancelled."""
        async with anyio.create_task_group() as group:
            while True:
                self._changed = anyio.Event()
                for slot in list(self.groups):
                    if slot not in self._reading:
                        self._reading.add(slot)
                        group.start_soon(self._read, slot, name=f"streamflow-tailer:{slot}")
                await self._changed.wait()

    async def _read(self, slot: int) -> None:
        """The shared read of one group, while it has keys; a Redis failure (one that
        outlasted the link's retries) ends the group's current readers."""
        try:
            while keys := self.groups.get(slot):
                try:
                    reply = await self.link.call(
                        "xread", {key: self.cursors[key] for key in keys}, count=BATCH,
                        block=max(1, int(self.block * 1000)))
                except StreamflowError as error:
                    self._broadcast(error, keys)
                    await anyio.sleep(self.block)
                    continue
                for key, pairs in xread_streams(reply):
                    if key in self.cursors and pairs:
                        self.cursors[key] = pairs[-1][0]
                        batch = [parse_entry(pair) for pair in pairs]
                        for send in list(self.readers.get(key, ())):
                            self._hand(key, send, batch)
        finally:
            self._reading.discard(slot)
            if self.groups.get(slot):  # keys joined as it ended: run() starts it again
                self._changed.set()

    def _broadcast(self, error: StreamflowError, keys: set[str]) -> None:
        for key in list(keys):
            for send in list(self.readers.get(key, ())):
                self._hand(key, send, error)

    def _hand(self, key: str, send: MemoryObjectSendStream[Any], item: Any) -> None:
        """Queue ``item`` for one reader, or drop a reader ``QUEUE`` items behind."""
        try:
            send.send_nowait(item)
        except anyio.WouldBlock:  # it catches up from Redis when it reads again
            self._leave(key, send)
        except anyio.BrokenResourceError:  # its reader is gone (cancelled mid-handover)
            self._leave(key, send)

    def _join(self, key: str, cursor: str) -> tuple[MemoryObjectSendStream[Any], Any]:
        send, receive = anyio.create_memory_object_stream[Any](QUEUE)
        self.readers.setdefault(key, set()).add(send)
        self.cursors.setdefault(key, cursor)
        self.groups.setdefault(self.link.slot(key), set()).add(key)
        self._changed.set()
        return send, receive

    def _leave(self, key: str, send: MemoryObjectSendStream[Any]) -> None:
        senders = self.readers.get(key, set())
        senders.discard(send)
        if not senders:
            self.readers.pop(key, None)
            self.cursors.pop(key, None)
            slot = self.link.slot(key)
            keys = self.groups.get(slot, set())
            keys.discard(key)
            if not keys:
                self.groups.pop(slot, None)
        send.close()

    async def follow(self, key: str, cursor: str, window: float
                     ) -> AsyncGenerator[list[Entry], None]:
        """The entries of ``key`` after ``cursor``: caught up alone, then from the shared read.

        Joins the fan-out before catching up, so no entry falls between the two; after
        being dropped for lagging it joins again and catches up from where it was.
        ``window`` seconds without an entry is :class:`StreamTimeoutError`, not counting
        the time the link waited out a failover.
        """
        while True:
            send, receive = self._join(key, cursor)
            try:
                while True:  # catch up on our own: everything up to now
                    reply = xread_streams(await self.link.call("xread", {key: cursor},
                                                               count=BATCH))
                    if not reply:
                        break
                    batch = until_end([parse_entry(pair) for pair in reply[0][1]])
                    yield batch
                    if batch[-1].kind == END:
                        return
                    cursor = batch[-1].id
                mine = entry_key(cursor)
                quiet_since = anyio.current_time()
                while True:
                    item: Any = None
                    left = quiet_since + window - anyio.current_time()
                    with anyio.move_on_after(max(left, 0.0)):
                        try:
                            item = await receive.receive()
                        except anyio.EndOfStream:  # dropped for lagging: catch up again
                            break
                    if item is None:
                        now = anyio.current_time()
                        if self.link.outage:  # Redis fails over: the producer waits too
                            quiet_since = now
                            continue
                        if now - max(quiet_since, self.link.recovered) < window:
                            quiet_since = max(quiet_since, self.link.recovered)
                            continue
                        await still_there(self.link, key)
                        raise StreamTimeoutError("idle", window)
                    quiet_since = anyio.current_time()
                    if isinstance(item, StreamflowError):  # each reader its own copy
                        error = copy.copy(item)
                        error.partial, error.events = None, []
                        raise error from item
                    batch = until_end([e for e in item if entry_key(e.id) > mine])
                    if batch:
                        yield batch
                        if batch[-1].kind == END:
                            return
                        mine = entry_key(batch[-1].id)
                        cursor = batch[-1].id
            finally:
                self._leave(key, send)
                receive.close()
