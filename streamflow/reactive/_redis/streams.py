"""A streamflow stream stored in a Redis Stream: the entry layout, and the reader both ends trust.

One stream key holds one answer, in order::

    <ms>-0  k=start  heartbeat=2.0 maxlen=… w=… [window=…]  written before the upstream is read
    <ms>-1  k=event  d={uni JSON}                 one per UniEvent (streamflow.wire.dialects.uni)
    <ms>-2  k=beat                                every ``heartbeat`` seconds while live
    <ms>-n  k=end    d={stop event | {"error": {...}}}   the terminal entry, then EXPIRE

The writer (:class:`~streamflow.reactive.sinks.redis.RedisStreamSink`) chooses the ids: ``<ms>``
is its clock when the stream starts, the same in every entry, and the sequence
number counts the entries from 0. So a reader knows the id of the entry that must
come next: when ``XREAD`` hands it any other, entries it has not read are gone --
trimmed by ``MAXLEN`` (:class:`LimitExceededError` ``redis_maxlen``) or lost with a
Redis restart or a cluster failover (:class:`StreamGapError`, naming the ids lost) -- and
it says so at that batch, never delivering a gap. A repeated ``XADD`` (a retried
command) is refused by Redis, never stored twice.

The entry id is the event id: a reader that saw ``<id>`` continues after it, on any
machine. Readers are :func:`~streamflow.reactive.sources.redis.from_redis` and
:mod:`streamflow.servers.web.resume`, all through :func:`read_batches`. The client both ends
use is :class:`~streamflow.reactive._redis.link.RedisLink`; the one shared live read of
a web app is :class:`~streamflow.reactive._redis.tailer.Tailer`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from ...core.errors import (
    LimitExceededError,
    ProtocolError,
    StreamflowError,
    StreamGapError,
    StreamNotFoundError,
    StreamTimeoutError,
    TransportError,
)
from ...core.events import UniEvent, usage_to_dict
from .link import RedisLink


class Follows(Protocol):
    """What a read needs of the shared read (:class:`~streamflow.reactive._redis.tailer.Tailer`)."""

    def follow(self, key: str, cursor: str, window: float) -> AsyncGenerator[list[Entry], None]:
        """The entries of ``key`` after ``cursor``."""
        ...


START, EVENT, BEAT, END = "start", "event", "beat", "end"
DEFAULT_HEARTBEAT = 2.0
WINDOW_BEATS = 3  # a reader gives up after this many heartbeats without an entry
MAX_BLOCK = 10.0  # seconds one XREAD blocks at most (below the socket timeout)
BATCH = 512  # entries per read
VANISHED_GRACE = 5.0
"""Seconds a key missing on a cluster is asked for again (see :func:`still_there`)."""

Position = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Entry:
    """One stream entry: ``id``, ``kind`` (start/event/beat/end), ``data`` (uni JSON or "")."""

    id: str
    kind: str
    data: str
    fields: dict[str, str]


def entry_key(entry_id: str) -> Position:
    """``"1700000000000-3"`` -> ``(1700000000000, 3)``, for ordering; ProtocolError if not an id."""
    ms, _, seq = entry_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        raise ProtocolError(f"not a Redis stream entry id: {entry_id!r}") from None


def entry_id(position: Position) -> str:
    """``(1700000000000, 3)`` -> ``"1700000000000-3"``."""
    return f"{position[0]}-{position[1]}"


def parse_entry(pair: tuple[str, dict[str, str]]) -> Entry:
    """One ``(id, fields)`` pair of an ``XRANGE``/``XREAD`` reply."""
    fields = pair[1]
    return Entry(pair[0], fields.get("k", ""), fields.get("d", ""), fields)


def entry_data(item: UniEvent | StreamflowError) -> str:
    """An ``event`` or ``end`` entry's ``d``: the uni JSON of an event, or of an error with
    its partial's provider data and usage."""
    from ...wire.dialects.uni.decode import to_json

    text = to_json(item)
    partial = item.partial if isinstance(item, StreamflowError) else None
    if partial is not None and partial.provider:
        text = _with_field(text, "provider", partial.provider)
    if partial is not None and partial.usage_metadata:
        text = _with_field(text, "usage_metadata", usage_to_dict(partial.usage_metadata))
    return text


def _with_field(text: str, name: str, value: object) -> str:
    """The JSON object ``text`` with ``name`` added last."""
    extra = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return f'{text[:-1]},"{name}":{extra}}}'


def xread_streams(reply: Any) -> list[tuple[str, list[Any]]]:
    """An ``XREAD`` reply as ``[(key, [(id, fields)...])...]`` (RESP2 lists, or RESP3's dict)."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [(key, value[0] if value and isinstance(value[0], list) else value)
                for key, value in reply.items()]  # {key: [entries]} or {key: entries}
    return [(key, pairs) for key, pairs in reply]


def until_end(batch: list[Entry]) -> list[Entry]:
    """``batch`` up to and with its ``end`` entry."""
    for index, entry in enumerate(batch):
        if entry.kind == END:
            return batch[:index + 1]
    return batch


async def still_there(link: RedisLink, key: str) -> None:
    """A live key that vanished: Redis restarted without persistence (or was flushed).

    On a cluster a node that crashed and came back empty may answer for its old slots
    until the cluster tells it a replica took them over (a client whose slot map is
    older asks it): the key is asked for again for :data:`VANISHED_GRACE` seconds
    before it counts as gone."""
    if await link.call("exists", key):
        return
    if link.cluster:
        with anyio.move_on_after(VANISHED_GRACE):
            while True:
                await anyio.sleep(0.25)
                if await link.call("exists", key):
                    return
    raise TransportError(f"the stream {key!r} vanished from Redis while being read "
                         "(a restart without persistence, or a flush)")


async def read_batches(link: RedisLink, key: str, *, after: str | None = None,
                       window: float | None = None, tailer: Follows | None = None
                       ) -> AsyncGenerator[list[Entry], None]:
    """The entries of ``key`` after entry id ``after`` (all when ``None``), live, to the end.

    Each batch is what one read returned, every entry the one after the last (see
    the module doc). Raises :class:`StreamNotFoundError` when ``key`` does not exist,
    :class:`LimitExceededError` (``redis_maxlen``) as soon as an entry wanted was
    trimmed away -- at the start or at any later batch --, :class:`StreamTimeoutError`
    when no entry (event or heartbeat) arrives for ``window`` seconds (default: three
    of the writer's heartbeats), :class:`TransportError` when Redis goes away, and
    :class:`StreamGapError` (naming the ids) when entries are missing from the middle
    (lost in a restart or a failover). Ends after the ``end`` entry. With a
    :class:`Tailer`, the live part comes from its one shared ``XREAD`` instead of one
    blocked connection per reader.
    """
    head = await _head(link, key)
    if head is None:
        raise StreamNotFoundError(f"no stream at Redis key {key!r} (never started, or expired)",
                                  key=key)
    wanted = _first_wanted(key, entry_key(head.id), after)
    if entry_key(head.id) > wanted:
        raise await _missing(link, key, wanted)
    if window is None:  # the writer's own (a stream another writer may take over waits
        # longer), else three of its heartbeats
        beat = head.fields.get("heartbeat") if head.kind == START else None
        said = head.fields.get("window") if head.kind == START else None
        window = float(said) if said else WINDOW_BEATS * float(beat or DEFAULT_HEARTBEAT)
    cursor = after if after is not None else "0-0"
    source = tailer.follow(key, cursor, window) if tailer is not None \
        else _poll(link, key, cursor, window)
    async with aclosing(source) as batches:
        async for batch in batches:
            for index, entry in enumerate(batch):
                if entry_key(entry.id) != wanted:  # the entries before it, then why
                    error = await _missing(link, key, wanted, entry_key(entry.id))
                    if index:
                        yield batch[:index]
                    raise error
                wanted = (wanted[0], wanted[1] + 1)
            yield batch
            if batch[-1].kind == END:
                return


def _first_wanted(key: str, head: Position, after: str | None) -> Position:
    """The id of the first entry a reader starting after ``after`` must get."""
    if after is None:
        return head[0], 0
    position = entry_key(after)
    if position[0] == head[0]:
        return position[0], position[1] + 1
    if position < head:  # an id from before this stream: everything is new to the reader
        return head[0], 0
    raise ProtocolError(f"{after!r} is not an entry id of the stream {key!r}")


async def _head(link: RedisLink, key: str) -> Entry | None:
    head = await link.call("xrange", key, "-", "+", count=1)
    return parse_entry(head[0]) if head else None


async def _missing(link: RedisLink, key: str, wanted: Position, got: Position | None = None
                   ) -> StreamflowError:
    """Entry ``wanted`` is not where it must be (``got`` came instead): why, as a typed error
    (raised when the key itself is gone)."""
    head = await _head(link, key)
    if head is None:
        await still_there(link, key)
    if head is not None and entry_key(head.id) > wanted:  # MAXLEN trims from the head
        length = await link.call("xlen", key)
        return LimitExceededError("redis_maxlen", int(length or 0))
    if got is None or got[0] != wanted[0] or got[1] <= wanted[1]:
        return TransportError(f"the stream {key!r} holds entry {entry_id(got or wanted)} where "
                              f"{entry_id(wanted)} belongs (another writer shares the key)")
    missing = tuple(entry_id((wanted[0], n)) for n in range(wanted[1], got[1]))
    after = entry_id((wanted[0], wanted[1] - 1)) if wanted[1] else None
    return StreamGapError(key, missing, after=after)


async def _poll(link: RedisLink, key: str, cursor: str, window: float
                ) -> AsyncGenerator[list[Entry], None]:
    """The entries after ``cursor``, by ``XREAD BLOCK`` on a connection of our own."""
    silent = 0.0  # seconds Redis had nothing new while we waited (not our own busy time)
    while True:
        wait = min(window - silent, MAX_BLOCK)
        reply = await link.call("xread", {key: cursor}, count=BATCH,
                                block=max(1, int(wait * 1000)))
        if not reply:
            await still_there(link, key)
            silent += wait
            if silent >= window:
                raise StreamTimeoutError("idle", window)
            continue
        silent = 0.0
        batch = until_end([parse_entry(pair) for pair in xread_streams(reply)[0][1]])
        yield batch
        if batch[-1].kind == END:
            return
        cursor = batch[-1].id
