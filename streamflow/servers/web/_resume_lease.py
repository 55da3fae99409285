"""An answer that outlives its producer: the lease on a stream, and the watch for lapsed ones.

A producer of an answer that can be asked again -- a failover chain's source, whose chain
every instance knows by name (``ResumableStreams(chains={...})``) -- keeps beside its
stream, in Redis:

* the **recipe**: the chain's name and the neutral request (``<stream>:recipe``);
* a **lease**: ``<prefix>lease:<stream>`` naming the producer (its instance and itself), for
  :data:`LEASE_BEATS` heartbeats, renewed every heartbeat (by a script that renews it only
  for its holder; an instance renews all its leases in one round trip: :class:`Leases`);
* the stream in ``<prefix>producing``, a sorted set scored by when the lease lapses.

Every instance :func:`watch` es that set (every half heartbeat): a stream whose lease
lapsed -- its producer died, SIGKILL included -- is claimed by one instance (``SET NX``),
which reads the answer so far from the stream and continues it there (the resume
module's ``take_over``): the readers, who wait :data:`WINDOW_BEATS` heartbeats without an
entry, read on into one answer. A producer stopped before its answer ends (its instance
shuts down: SIGTERM) hands it over at once: the lease dropped, the stream listed as lapsed.
A producer that finds its lease gone (it stalled past it and another instance took over)
stops writing at once. On a Redis Cluster the lease and
the recipe are in the stream's slot; the set is one key.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio

from ...app.failover import FailoverSource
from ...core.errors import StreamflowError
from ...core.requests import ChatRequest
from ...reactive._redis.link import RedisLink
from ...wire.redaction import redacting_logger

log = redacting_logger("streamflow.servers.web.resume")

LEASE_BEATS = 3.0
"""A lease lasts this many heartbeats past its last renewal."""
WINDOW_BEATS = 6.0
"""A taken-over stream's readers wait this many heartbeats without an entry (the lease's
lapse, the watch's round and the new producer's first entry fit in it)."""


class Host(Protocol):
    """What a lease reads of :class:`~web.resume.ResumableStreams` (which imports this
    module): the chains every instance knows, who this instance is, its keys and timing."""

    chains: dict[str, Any]
    instance: str
    prefix: str
    heartbeat: float
    ttl: float

    @property
    def link(self) -> RedisLink: ...

    @property
    def leases(self) -> Leases: ...


_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def recipe_of(streams: Host, source: Any) -> dict[str, Any] | None:
    """What another instance needs to ask ``source``'s answer again: its chain's name (a
    chain ``streams`` knows) and its request; ``None`` for a source no instance could
    ask again (a byte source, an Agent run, a chain not registered)."""
    if not isinstance(source, FailoverSource) or source.earlier is not None:
        return None
    for name, chain in streams.chains.items():
        if chain is source.failover:
            return {"chain": name, "request": source.request.to_dict()}
    return None


def read_recipe(streams: Host, raw: Any) -> tuple[Any, ChatRequest] | None:
    """The chain and the request of a stored recipe (``None``: none stored -- it expired
    with its stream --, unknown here, or unreadable)."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        chain = streams.chains.get(str(data["chain"]))
        request = ChatRequest.from_dict(data["request"])
    except (ValueError, KeyError, TypeError) as error:
        log.warning("a stored recipe cannot be read: %s", error)
        return None
    if chain is None:
        log.warning("a stream needs the chain %r, which this instance does not know",
                    data.get("chain"))
        return None
    return chain, request


class Lease:
    """This instance's lease on the stream ``key`` of ``streams`` (see the module doc)."""

    def __init__(self, streams: Host, key: str) -> None:
        self.streams = streams
        self.key = key
        #: who holds it: this producer (an instance may produce an answer again after
        #: losing it, so the instance's name alone would not tell its producers apart)
        self.holder = f"{streams.instance}:{uuid.uuid4().hex[:12]}"
        self.lease_key = f"{streams.prefix}lease:{key}"
        self.set_key = f"{streams.prefix}producing"
        self.recipe_key = f"{key}:recipe"
        self.ms = max(1, int(LEASE_BEATS * streams.heartbeat * 1000))

    def _until(self) -> int:
        return int(time.time() * 1000) + self.ms

    async def take(self, recipe: dict[str, Any]) -> None:
        """A new answer's: store its recipe, hold the lease, list the stream."""
        link = self.streams.link
        life = max(86400, int(self.streams.ttl))
        await link.call("set", self.recipe_key, json.dumps(recipe, separators=(",", ":")),
                        ex=life)
        await link.call("set", self.lease_key, self.holder, px=self.ms)
        await link.call("zadd", self.set_key, {self.key: self._until()})

    async def claim(self) -> bool:
        """Take a lapsed lease (one instance does); True when it is now ours."""
        link = self.streams.link
        if not await link.call("set", self.lease_key, self.holder, nx=True,
                               px=self.ms):
            return False
        await link.call("zadd", self.set_key, {self.key: self._until()})
        return True

    async def keep(self) -> bool:
        """Hold the lease while it is ours (the instance's :class:`Leases` renews it every
        heartbeat); returns False once it is not (another instance holds it), never
        returns otherwise."""
        await self.streams.leases.hold(self)
        return False

    async def release(self, *, hand_over: bool = False) -> None:
        """The answer ended: drop the lease (if still ours) and the listing. ``hand_over``:
        it did not end, this producer stops (its instance shuts down): drop the lease and
        list the stream as lapsed, so another instance continues it at its next look
        instead of a lease later."""
        link = self.streams.link
        try:
            await link.call("eval", _RELEASE, 1, self.lease_key, self.holder)
            if hand_over:
                await link.call("zadd", self.set_key, {self.key: 0})
            else:
                await link.call("zrem", self.set_key, self.key)
        except StreamflowError as error:  # the lease lapses by itself; the watch drops it
            log.warning("%s: releasing the lease failed: %s", self.key, error)


class Leases:
    """The leases this instance's producers hold, renewed together every heartbeat: one
    pipelined round trip of renewal scripts (split by node on a cluster), then one
    ``ZADD`` listing the renewed streams' new lapse times -- where each producer renewing
    its own cost two round trips per answer per heartbeat (``python -m bench.idle
    --chain``). A Redis that fails a renewal is tried again at the next heartbeat; a
    lease found held by another is lost (:meth:`hold` returns). Run :meth:`run` in the
    app's task group."""

    def __init__(self, streams: Host) -> None:
        self.streams = streams
        self._held: dict[Lease, anyio.Event] = {}  # a lease -> set when it is lost
        self._some = anyio.Event()  # set while a lease is held

    async def run(self) -> None:
        """Renew the held leases every heartbeat, until cancelled."""
        while True:
            if not self._held:
                self._some = anyio.Event()
                await self._some.wait()
            await anyio.sleep(self.streams.heartbeat)
            await self.renew(list(self._held))

    async def renew(self, leases: list[Lease]) -> None:
        """Renew ``leases`` (those still ours) and list their new lapse times."""
        link = self.streams.link
        try:
            # as a raw EVAL: redis-py's sync cluster pipeline has no eval()
            replies = await link.pipeline(
                *[("execute_command", ("EVAL", _RENEW, 1, lease.lease_key, lease.holder,
                                       lease.ms), {}) for lease in leases],
                transaction=False, raise_on_error=False)
        except StreamflowError as error:
            log.warning("renewing %d leases failed: %s", len(leases), error)
            return
        renewed: dict[str, int] = {}
        for lease, reply in zip(leases, replies, strict=True):
            if isinstance(reply, Exception):  # refused: tried again next time
                log.warning("%s: renewing the lease failed: %s", lease.key, reply)
            elif reply:
                if lease in self._held:  # (not released meanwhile: do not list it again)
                    renewed[lease.key] = lease._until()
            elif (lost := self._held.pop(lease, None)) is not None:
                lost.set()
        if renewed:
            try:
                await link.call("zadd", leases[0].set_key, renewed)
            except StreamflowError as error:
                log.warning("listing %d renewed leases failed: %s", len(renewed), error)

    async def hold(self, lease: Lease) -> None:
        """Keep ``lease`` renewed; returns once it is lost (cancel to stop holding it)."""
        lost = anyio.Event()
        self._held[lease] = lost
        self._some.set()
        try:
            await lost.wait()
        finally:
            if self._held.get(lease) is lost:
                del self._held[lease]


async def watch(streams: Host,
                take_over: Callable[[str], Awaitable[None]]) -> None:
    """Every half heartbeat, the streams whose lease lapsed: ``take_over(key)`` each (it
    claims the lease first: one instance continues it)."""
    set_key = f"{streams.prefix}producing"
    while True:
        await anyio.sleep(streams.heartbeat / 2)
        try:
            due = await streams.link.call("zrangebyscore", set_key, "-inf",
                                          int(time.time() * 1000), start=0, num=16)
        except StreamflowError:
            continue  # Redis away: look again next time
        for key in due or ():
            await take_over(key.decode() if isinstance(key, bytes) else str(key))
