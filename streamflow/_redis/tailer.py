"""``Tailer``: one ``XREAD BLOCK`` over every Redis stream key a process tails, fanned out.

A web app serving many live answers would otherwise hold one blocked connection per
reader. :class:`~streamflow.web.resume.ResumableStreams` runs one Tailer per app;
:func:`~streamflow._redis.streams.read_batches` takes it as ``tailer=`` and
checks the order of what it hands out like any other read.
"""

from __future__ import annotations

import copy
import math
from collections.abc import AsyncGenerator
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from ..errors import StreamflowError, StreamTimeoutError
from .link import RedisLink
from .streams import BATCH, END, Entry, entry_key, parse_entry, still_there, until_end


class Tailer:
    """One ``XREAD BLOCK`` over every key this process tails, fanned out to its readers.

    Run :meth:`run` in a long-lived task group (``ResumableStreams`` does); readers
    call :meth:`follow`. A reader first catches up by itself (non-blocking reads),
    then takes the live entries the shared read hands it, skipping what it has.
    """

    def __init__(self, link: RedisLink, *, block: float = 0.1) -> None:
        self.link = link
        self.block = block
        self.cursors: dict[str, str] = {}
        self.readers: dict[str, set[MemoryObjectSendStream[Any]]] = {}
        self._changed = anyio.Event()

    async def run(self) -> None:
        """The shared read loop (until cancelled); a Redis failure ends the current readers."""
        while True:
            if not self.cursors:
                await self._changed.wait()
                self._changed = anyio.Event()
                continue
            try:
                reply = await self.link.call("xread", dict(self.cursors), count=BATCH,
                                             block=max(1, int(self.block * 1000)))
            except StreamflowError as error:
                self._broadcast(error)
                await anyio.sleep(self.block)
                continue
            for key, pairs in reply or []:
                if key in self.cursors and pairs:
                    self.cursors[key] = pairs[-1][0]
                    batch = [parse_entry(pair) for pair in pairs]
                    for send in self.readers.get(key, ()):
                        send.send_nowait(batch)

    def _broadcast(self, error: StreamflowError) -> None:
        for senders in self.readers.values():
            for send in senders:
                send.send_nowait(error)

    async def follow(self, key: str, cursor: str, window: float
                     ) -> AsyncGenerator[list[Entry], None]:
        """The entries of ``key`` after ``cursor``: caught up alone, then from the shared read."""
        send, receive = anyio.create_memory_object_stream[Any](math.inf)
        self.readers.setdefault(key, set()).add(send)
        self.cursors.setdefault(key, cursor)
        self._changed.set()
        try:
            while True:  # catch up on our own: everything up to now
                reply = await self.link.call("xread", {key: cursor}, count=BATCH)
                if not reply:
                    break
                batch = until_end([parse_entry(pair) for pair in reply[0][1]])
                yield batch
                if batch[-1].kind == END:
                    return
                cursor = batch[-1].id
            mine = entry_key(cursor)
            while True:
                item: Any = None
                with anyio.move_on_after(window):
                    item = await receive.receive()
                if not isinstance(item, (list, StreamflowError)):
                    await still_there(self.link, key)
                    raise StreamTimeoutError("idle", window)
                if isinstance(item, StreamflowError):  # each reader its own copy (partial)
                    error = copy.copy(item)
                    error.partial, error.events = None, []
                    raise error from item
                batch = until_end([e for e in item if entry_key(e.id) > mine])
                if batch:
                    yield batch
                    if batch[-1].kind == END:
                        return
                    mine = entry_key(batch[-1].id)
        finally:
            senders = self.readers.get(key, set())
            senders.discard(send)
            if not senders:
                self.readers.pop(key, None)
                self.cursors.pop(key, None)
            send.close()
            receive.close()
