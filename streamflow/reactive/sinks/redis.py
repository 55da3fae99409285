"""``RedisStreamSink``: a stream written to a Redis Stream, so any process can replay and tail it.

::

    async with RedisStreamSink("redis://127.0.0.1:6379", "answer:42", ttl=600) as sink:
        await streamflow.run(source, sink)       # readers: streamflow.reactive.sources.from_redis

The first argument is a Redis URL, a Redis Cluster URL (``redis+cluster://host:port,...``)
or a redis-py client (``redis.asyncio.Redis``/``RedisCluster``; ``redis.Redis``/
``redis.cluster.RedisCluster`` on trio): see :mod:`streamflow.reactive._redis.link`. On a
cluster the writer rides out a failover (its writes wait until the replica took over,
then go on), and ``replicas=1`` makes every batch wait until a replica has it (``WAIT``),
so a primary that dies takes no acknowledged entry with it.

Entries (see :mod:`streamflow.reactive._redis.streams`): a ``start`` entry when the sink
starts, one ``event`` entry per UniEvent in the ``uni`` encoding, a ``beat`` entry
whenever ``heartbeat`` seconds pass without a write while live, and the terminal
``end`` entry -- the stop event, or the typed error (its partial message is the
events before it, all in the stream, plus the partial's provider data that no event
carried). Then the key expires after ``ttl`` seconds. Every ``XADD`` trims the
stream to ``maxlen`` entries (exactly), so a runaway stream cannot grow without
bound; while live, the expiry is renewed every ``heartbeat`` seconds, so the key of
a producer that died (SIGKILL) still goes away.

The sink names its entries ``<ms>-<n>`` (its clock at the start, then a count from
0): readers tell a trimmed or lost entry from the ids alone, and a write that
:class:`~streamflow.reactive._redis.link.RedisLink` retries after a dropped connection
is refused by Redis if it had arrived, never stored twice.

Durability (``replicas=n``): after each batch of entries -- one round trip -- the sink
sends ``WAIT n replica_timeout`` on the same connection, and writes nothing more until
``n`` replicas acknowledged the batch (or ``replica_timeout`` passed); a batch whose
round trip a failover cut is written again, whole, to the new primary. So what
readers may have seen is on a replica or written again: a primary killed mid-stream loses
nothing. It costs one replication round trip per batch
(docs/resume.md has the figures), and a node with fewer replicas than ``n`` (say, the
promoted replica before its old primary came back) makes each batch wait
``replica_timeout``; such batches are counted in ``unreplicated`` and logged once. Without
it a failover may lose the entries the dead primary had not yet replicated, and readers
get :class:`~streamflow.core.errors.StreamGapError` naming them.

The sink never stops the upstream: ``run()`` reads it to its end (bounded by the
``deadline`` of its limits) whether or not anyone is reading the key, so a client
that comes later gets the whole answer.

Without ``async with``, passing the sink to ``run()`` starts it on the first item
and runs its writer (and heartbeat) in ``run()``'s task group.
"""

from __future__ import annotations

import math
import secrets
import time
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ...core.errors import CancelledStreamError, StreamflowError, TransportError
from ...core.events import UniEvent
from ...wire.redaction import redacting_logger
from .._redis.link import RedisTarget, transport_error
from .._redis.streams import (
    BEAT,
    DEFAULT_HEARTBEAT,
    END,
    EVENT,
    START,
    RedisLink,
    entry_data,
    entry_id,
    entry_key,
    parse_entry,
)
from .._scope import current_scope
from .base import AsyncSink

__all__ = ["RedisStreamSink"]

log = redacting_logger("streamflow.reactive.sinks.redis")


_FENCED_WRITE = """
if redis.call('get', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('LEASE the stream has another writer now')
end
local out, i = {}, 4
while i <= #ARGV do
  local n = tonumber(ARGV[i + 2])
  local args = {KEYS[1]}
  if ARGV[i + 1] == '0' then args[#args + 1] = 'NOMKSTREAM' end
  args[#args + 1] = 'MAXLEN'
  args[#args + 1] = '='
  args[#args + 1] = ARGV[2]
  args[#args + 1] = ARGV[i]
  for j = 1, n do args[#args + 1] = ARGV[i + 2 + j] end
  local reply = redis.pcall('XADD', unpack(args))
  if type(reply) == 'table' and reply.err then
    if not string.find(reply.err, 'equal or smaller') then return reply end
    out[#out + 1] = 0
  elseif not reply then
    out[#out + 1] = -1
  else
    out[#out + 1] = 1
  end
  i = i + 3 + n
end
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return out
"""
"""A fenced batch (:attr:`RedisStreamSink.fence`): written only while the lease ``KEYS[2]``
holds ``ARGV[1]``; per entry 1 written, 0 already there (a send retried), -1 the key is
gone (only a start entry creates it)."""


class RedisStreamSink(AsyncSink):
    """Write one stream to the Redis Stream ``key`` at ``url`` (see the module doc).

    * ``url`` -- a Redis or Redis Cluster URL, or a redis-py client (see the module doc).
    * ``maxlen`` -- entries kept at most (older ones are trimmed); default 100,000.
    * ``ttl`` -- seconds the key lives after the terminal entry (and after the last
      write of a producer that died); default one hour.
    * ``heartbeat`` -- seconds without a write after which a heartbeat entry is
      written; readers give up after three missed beats.
    * ``link`` -- a :class:`~streamflow.reactive._redis.streams.RedisLink` to share
      (its connection pool); by default the sink opens and closes its own.
    * ``replicas`` -- after each batch, ``WAIT`` until that many replicas have it (at
      most ``replica_timeout`` seconds); 0 (the default) does not wait. See the module
      doc for what it buys and costs; ``unreplicated`` counts the batches that were
      acknowledged by fewer.
    * ``window`` -- how long readers wait without an entry before giving up (written in
      the start entry; default: three heartbeats): a stream another process may take
      over (:meth:`take_over`) gives them the time to.
    * ``fence`` -- ``(lease key, writer name)``: each batch is written by one script that
      checks first that the lease names this writer, so a writer whose lease lapsed and
      was taken by another writes nothing more (``lease_lost``) -- two never interleave;
      and a batch never ends inside a thinking block or a tool call, so the stream a
      writer leaves holds whole groups (but for a text one, which the next goes on with).

    One writer task sends the entries: events that arrive while a write is in
    flight go together in the next round trip (a pipeline), at most ``buffer``
    wait, and ``on_event`` waits when they are that many (backpressure).
    """

    buffer = 1024

    def __init__(self, url: RedisTarget, key: str, *, maxlen: int = 100_000,
                 ttl: float = 3600.0, heartbeat: float = DEFAULT_HEARTBEAT,
                 link: RedisLink | None = None, replicas: int = 0,
                 replica_timeout: float = 1.0, window: float | None = None,
                 fence: tuple[str, str] | None = None) -> None:
        if maxlen < 2:
            raise ValueError("maxlen must leave room for the start and end entries")
        if replicas < 0 or replica_timeout <= 0:
            raise ValueError("replicas must be 0 or more, replica_timeout above 0")
        self.replicas = replicas
        self.replica_timeout = replica_timeout
        self.unreplicated = 0  # batches fewer than `replicas` replicas acknowledged
        self.url = url
        self.key = key
        self.maxlen = maxlen
        self.ttl = max(1, math.ceil(ttl))
        self.heartbeat = heartbeat
        self.window = window
        #: ``(lease key, this writer's name)``: every batch written only while the lease
        #: names this writer (a stream another process may take over)
        self.fence = fence
        self.lease_lost = False
        self.last_id: str | None = None  # id of the last entry written
        self._ms = 0  # the ms part of every entry id: the clock when the stream started
        self._count = 0  # entries written: the sequence number of the next one
        self._writer = secrets.token_hex(8)  # tells our start entry from another writer's
        self.finished = False  # the terminal entry is queued (or written)
        self._link = link
        self._own_link = link is None
        self._started = False
        self._pending: list[dict[str, str]] = []
        self._whole = 0  # pending entries up to the end of the last whole group
        self._wake = anyio.Event()
        self._room = anyio.Event()
        self._done = anyio.Event()
        self._error: StreamflowError | None = None
        self._loop: anyio.CancelScope | None = None
        self._renewed = 0.0
        self._group: Any = None

    async def start(self, task_group: TaskGroup | None = None) -> str:
        """Write the ``start`` entry and start the writer; returns the entry id.

        The writer (and heartbeat) runs in ``task_group`` (default: the current
        streamflow scope's, i.e. ``run()``'s). Starting twice does nothing.
        """
        if self._started:
            return self.last_id or ""
        group = task_group
        if group is None:
            scope = current_scope()
            if scope is None:
                raise RuntimeError("RedisStreamSink.start() needs a task group: use "
                                   "`async with sink:` or pass it to streamflow.run()")
            group = scope.task_group
        if self._link is None:
            self._link = RedisLink(self.url)
        self._ms = time.time_ns() // 1_000_000
        head = {"k": START, "heartbeat": repr(self.heartbeat), "maxlen": str(self.maxlen),
                "w": self._writer}
        if self.window is not None:
            head["window"] = repr(self.window)
        await self._write([head])
        self._begin(group)
        return self.last_id or ""

    async def take_over(self, task_group: TaskGroup) -> bool:
        """Go on writing a stream another writer started and left without its terminal
        entry (its producer died): the entries continue its numbering, a heartbeat
        first, so its readers read on. False when the stream has ended (or is gone):
        nothing to take over. The writer runs in ``task_group``."""
        if self._started:
            raise RuntimeError("a started sink takes nothing over")
        if self._link is None:
            self._link = RedisLink(self.url)
        last = await self._link.call("xrevrange", self.key, "+", "-", count=1)
        if not last or parse_entry(last[0]).kind == END:
            return False
        self._ms, count = entry_key(parse_entry(last[0]).id)
        self._count = count + 1
        await self._write([{"k": BEAT}])
        self._begin(task_group)
        return True

    def _begin(self, group: TaskGroup) -> None:
        self._started = True
        self._loop = anyio.CancelScope()
        group.start_soon(self._write_loop, self._loop, name=f"streamflow-redis:{self.key}")

    async def _write(self, batch: list[dict[str, str]]) -> None:
        """XADD every entry in one round trip; renew the expiry now and then, set it at the end."""
        assert self._link is not None
        ids = [entry_id((self._ms, self._count + n)) for n in range(len(batch))]
        now = anyio.current_time()
        expire: int | None = None
        if batch[-1]["k"] == END:
            expire = self.ttl
        elif now - self._renewed >= self.heartbeat or batch[-1]["k"] == START \
                or self.replicas:  # a write on WAIT's connection: see _on_node
            # a live key outlives its last renewal by ttl + a few beats
            expire = self.ttl + math.ceil(3 * self.heartbeat)
            self._renewed = now
        if self.fence is not None:
            await self._write_fenced(ids, batch, expire)
            return
        # only the start entry may create the key: a later write to a missing key means
        # Redis lost it (a restart without persistence), and must fail, not start afresh
        commands: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("xadd", (self.key, fields), {"id": id_, "maxlen": self.maxlen,
                                          "approximate": False,
                                          "nomkstream": fields["k"] != START})
            for id_, fields in zip(ids, batch, strict=True)]
        if expire is not None:
            commands.append(("expire", (self.key, expire), {}))
        if self.replicas or self._link.cluster:
            replies = await self._on_node(commands)
        else:
            replies = await self._link.pipeline(*commands, transaction=False,
                                                raise_on_error=False)
        for id_, fields, reply in zip(ids, batch, replies, strict=False):
            if reply is None:
                raise TransportError(f"the stream {self.key!r} vanished from Redis while being "
                                     "written (a restart without persistence, or a flush)")
            if isinstance(reply, Exception) and not await self._arrived(id_, fields, reply):
                raise transport_error(reply)
        for reply in replies[len(batch):]:
            if isinstance(reply, Exception):
                raise transport_error(reply)
        self._count += len(batch)
        self.last_id = ids[-1]

    async def _write_fenced(self, ids: list[str], batch: list[dict[str, str]],
                            expire: int | None) -> None:
        """The batch written by one script that first checks the stream is still this
        writer's (:attr:`fence`: its lease holds this writer's name): a writer that lost
        its lease writes nothing more (:attr:`lease_lost`, and a TransportError)."""
        assert self._link is not None and self.fence is not None
        lease, holder = self.fence
        argv: list[Any] = [holder, self.maxlen, expire or 0]
        for id_, fields in zip(ids, batch, strict=True):
            pairs = [part for pair in fields.items() for part in pair]
            argv += [id_, int(fields["k"] == START), len(pairs), *pairs]
        command: tuple[str, tuple[Any, ...], dict[str, Any]] = (
            "eval", (_FENCED_WRITE, 2, self.key, lease, *argv), {})
        if self.replicas or self._link.cluster:
            reply = (await self._on_node([command]))[0]
        else:
            reply = (await self._link.pipeline(command, transaction=False,
                                               raise_on_error=False))[0]
        if isinstance(reply, Exception):
            if "LEASE" in str(reply):
                self.lease_lost = True
                raise TransportError(f"the stream {self.key!r} is another writer's now (its "
                                     "lease was taken over)")
            raise transport_error(reply)
        if any(int(r) < 0 for r in reply):
            raise TransportError(f"the stream {self.key!r} vanished from Redis while being "
                                 "written (a restart without persistence, or a flush)")
        self._count += len(batch)
        self.last_id = ids[-1]

    async def _on_node(self, commands: list[tuple[str, tuple[Any, ...], dict[str, Any]]]
                       ) -> list[Any]:
        """The batch on one connection of the key's node, then (``replicas``) ``WAIT
        replicas timeout`` on it; a cluster's batches go this way too (redis-py's cluster
        pipeline, which routes every command anew, costs more: docs/resume.md).

        WAIT counts the replicas that have every write of its connection; the batch
        ends with an EXPIRE (always a write), so a batch sent again after a dropped
        connection -- whose XADDs Redis refuses, as it has them -- still waits for
        the replicas to have them.
        """
        assert self._link is not None
        raw = [_raw(command) for command in commands]
        if not self.replicas:
            return await self._link.on_node(self.key, *raw)
        replies = await self._link.on_node(
            self.key, *raw, wait=(self.replicas, max(1, int(self.replica_timeout * 1000))))
        acknowledged = replies.pop()
        if isinstance(acknowledged, Exception):
            raise transport_error(acknowledged)
        if int(acknowledged) < self.replicas:
            self.unreplicated += 1
            if self.unreplicated == 1:
                log.warning("%s: only %s of %s replicas acknowledged a batch within %g s "
                            "(counted in unreplicated)", self.key, acknowledged, self.replicas,
                            self.replica_timeout)
        return replies

    async def _arrived(self, id_: str, fields: dict[str, str], error: Exception) -> bool:
        """Whether Redis refused entry ``id_`` because a retried send had already written it."""
        if "equal or smaller" not in str(error):
            return False
        if fields["k"] != START:
            return True  # the key is ours since our start entry: only we write these ids
        assert self._link is not None
        found = await self._link.call("xrange", self.key, id_, id_)
        return bool(found) and parse_entry(found[0]).fields.get("w") == self._writer

    async def _write_loop(self, cancel: anyio.CancelScope) -> None:
        with cancel:
            try:
                while True:
                    ready = self._ready()
                    if not ready:
                        with anyio.move_on_after(self.heartbeat):
                            await self._wake.wait()
                        self._wake = anyio.Event()
                        ready = self._ready()
                    if ready:
                        batch = self._pending[:ready]
                        del self._pending[:ready]
                        self._whole = max(0, self._whole - ready)
                        self._room.set()
                        self._room = anyio.Event()
                        await self._write(batch)
                        if batch[-1]["k"] == END:
                            return
                    elif not self.finished:
                        await self._write([{"k": BEAT}])
            except StreamflowError as exc:  # Redis is gone: on_event/on_end report it
                self._error = exc
            finally:
                self._done.set()
                self._room.set()

    def _ready(self) -> int:
        """How many pending entries go in the next batch: all of them; on a fenced stream
        (one another writer may take over), those up to the end of the last whole group,
        so no batch ends in a thinking block or a tool call that could be cut there --
        unless the buffer is full."""
        if self.fence is None or len(self._pending) >= self.buffer:
            return len(self._pending)
        return self._whole

    def _queue(self, fields: dict[str, str], event: UniEvent | None = None) -> None:
        """Queue one entry (of ``event``): on a fenced stream a batch may end after it
        unless it is inside a group but a text one (:func:`_ends_whole`)."""
        if self._error is not None:
            raise self._error
        self._pending.append(fields)
        if self.fence is not None and (event is None or _ends_whole(event)):
            self._whole = len(self._pending)
        self._wake.set()

    async def on_event(self, event: Any) -> None:
        """Queue one UniEvent (the stop event is the terminal entry); other items are skipped."""
        if self.finished or type(event) is not UniEvent:
            return
        await self.start()
        if event.event_type == "stop":
            await self._finish(entry_data(event))
            return
        self._queue({"k": EVENT, "d": entry_data(event)}, event)
        while len(self._pending) >= self.buffer and self._error is None:
            await self._room.wait()

    def on_event_nowait(self, event: Any) -> bool:
        """Queue one UniEvent for the writer at once, if the sink is started and has room
        (the stop event, which waits for its write, goes through :meth:`on_event`)."""
        if self.finished or type(event) is not UniEvent:
            return True  # skipped, as on_event skips it
        if (not self._started or self._error is not None or event.event_type == "stop"
                or len(self._pending) >= self.buffer):
            return False
        self._queue({"k": EVENT, "d": entry_data(event)}, event)
        return True

    async def on_record(self, data: str, *, last: bool = False) -> None:
        """Queue one entry of JSON written elsewhere (an Agent run's record, see
        :mod:`streamflow.servers.web.resume`); ``last`` makes it the terminal entry."""
        if self.finished:
            return
        await self.start()
        if last:
            await self._finish(data)
            return
        self._queue({"k": EVENT, "d": data})
        while len(self._pending) >= self.buffer and self._error is None:
            await self._room.wait()

    async def on_end(self, error: BaseException | None) -> None:
        """Write the terminal error entry (unless ``stop`` was written), set the expiry, stop."""
        try:
            if not self.finished:
                if error is None:
                    error = CancelledStreamError("the stream ended before its stop event")
                if not isinstance(error, StreamflowError):
                    error = CancelledStreamError(f"the producer failed: {error!r}")
                await self.start()
                await self._finish(entry_data(error))
        finally:
            await self.aclose()

    async def _finish(self, data: str) -> None:
        """Queue the terminal entry and wait until it is written (shielded, at most 10 s)."""
        self.finished = True
        self._queue({"k": END, "d": data})
        failover = self._link.failover if self._link is not None else 0.0
        with anyio.CancelScope(shield=True), anyio.move_on_after(10 + failover):
            await self._done.wait()
        if self._error is not None:
            raise self._error

    def abandon(self) -> None:
        """Write nothing more, at once, not even a terminal entry: another writer has the
        stream now (a producer whose lease was taken over)."""
        self.finished = True
        self._pending.clear()
        if self._loop is not None:
            self._loop.cancel()

    async def aclose(self) -> None:
        """Stop the writer and close an own connection (the entries stay until they expire)."""
        self.finished = True
        if self._loop is not None:
            self._loop.cancel()
        if self._link is not None and self._own_link:
            await self._link.aclose()

    async def __aenter__(self) -> RedisStreamSink:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        try:
            await self.start(self._group)
        except BaseException:
            await self._group.__aexit__(None, None, None)  # nothing was started in it
            raise
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        try:
            if not self.finished:
                try:
                    await self.on_end(exc if isinstance(exc, Exception) else
                                      CancelledStreamError("the producer was cancelled"))
                except StreamflowError:
                    if exc is None:
                        raise  # else the exception on its way out says more
            await self.aclose()
        finally:  # the heartbeat is cancelled: the group just waits for it to end
            await self._group.__aexit__(None, None, None)
        return None


def _ends_whole(event: UniEvent) -> bool:
    """Whether a stream cut after ``event`` holds no part of a group but a text one."""
    items = event.content_items
    return not items or items[0].type.endswith(".done") or items[0].type == "text.delta"


def _raw(command: tuple[str, tuple[Any, ...], dict[str, Any]]) -> tuple[Any, ...]:
    """One of the sink's ``xadd``/``expire``/``eval`` commands as Redis reads it."""
    name, args, options = command
    if name in ("expire", "eval"):
        return (name.upper(), *args)
    key, fields = args
    words: list[Any] = ["XADD", key]
    if options.get("nomkstream"):
        words.append("NOMKSTREAM")
    words += ["MAXLEN", "~" if options.get("approximate") else "=", options["maxlen"],
              options["id"]]
    for name_value in fields.items():
        words.extend(name_value)
    return tuple(words)
