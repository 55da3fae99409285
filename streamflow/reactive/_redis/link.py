"""``RedisLink``: the redis-py client both ends of a Redis stream use, on either anyio backend,
on one Redis or on a Redis Cluster.

What it connects to (:data:`RedisTarget`) is a URL or a redis-py client:

* ``redis://`` / ``rediss://`` / ``unix://`` -- one Redis;
* ``redis+cluster://host:port[,host:port...]`` (``rediss+cluster://`` for TLS) -- a Redis
  Cluster, found from any of the nodes named (the rest of the URL as redis-py reads it);
* a client you made: ``redis.asyncio.Redis`` or ``redis.asyncio.RedisCluster`` (asyncio),
  ``redis.Redis`` or ``redis.cluster.RedisCluster`` (either backend: run in worker threads).
  It must decode replies (``decode_responses=True``); the link never closes it.

redis-py's asyncio client is asyncio-only, so from a URL :class:`RedisLink` uses it on
asyncio and redis-py's *sync* client in anyio worker threads on trio (same commands, same
replies). ``redis`` is imported on first connection (the ``redis`` extra).

A command that meets a dropped connection (a pooled connection gone stale when Redis
restarted, a cut socket) is sent once more on a fresh connection after a short
backoff -- redis-py's own ``Retry`` with ``ExponentialBackoff`` on ``ConnectionError``
and ``TimeoutError`` -- so a restart costs no request; when that fails too, the
caller gets a :class:`~streamflow.core.errors.TransportError`. On a cluster, once the
link has reached it, a command that fails because a node went away (connection
errors, ``CLUSTERDOWN``, ``TRYAGAIN``, a slot nobody serves yet) is sent again, with
backoff, for up to ``failover`` seconds (:data:`FAILOVER`): the time a replica needs to
take over from a dead primary (``cluster-node-timeout``, 15 s by default, plus the
election). redis-py follows ``MOVED``/``ASK`` and refreshes the slot map on the way.
Commands sent twice must be harmless: the writer chooses its entry ids (see
:mod:`streamflow.reactive._redis.streams`), so a repeated ``XADD`` is refused by Redis
instead of stored twice.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from ..._extras import require
from ...core.errors import ProtocolError, StreamflowError, TransportError

if TYPE_CHECKING:
    import redis
    import redis.asyncio
    import redis.cluster

    RedisTarget: TypeAlias = (str | redis.asyncio.Redis | redis.asyncio.RedisCluster
                              | redis.Redis | redis.cluster.RedisCluster)
else:
    RedisTarget = Any  # "a URL or a redis-py client" (see the module doc)

MAX_CONNECTIONS = 10_000  # one per blocked reader: a pool must not cap live streams
THREADS = 256  # trio: worker threads of one RedisLink for its blocking redis calls
RETRIES = 1  # a command is sent at most this many more times after a connection error
BACKOFF_BASE = 0.1  # seconds: the retry waits min(BACKOFF_CAP, base * 2**failures), 0.2 s
BACKOFF_CAP = 1.0
FAILOVER = 20.0  # seconds a cluster command is retried while a node fails over
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

Raw = Sequence[Any]  # one command as Redis reads it: ("XADD", key, ...)


def is_cluster(target: RedisTarget) -> bool:
    """Whether ``target`` (a URL or a redis-py client) is a Redis Cluster."""
    if isinstance(target, str):
        return target.partition("://")[0].lower() in CLUSTER_SCHEMES
    return _kind(target)[0]


def _kind(client: Any) -> tuple[bool, bool]:
    """``(cluster, sync)`` of a redis-py client; TypeError for anything else."""
    import redis
    import redis.asyncio
    import redis.cluster

    if isinstance(client, redis.asyncio.RedisCluster):
        return True, False
    if isinstance(client, redis.cluster.RedisCluster):
        return True, True
    if isinstance(client, redis.asyncio.Redis):
        return False, False
    if isinstance(client, redis.Redis):
        return False, True
    raise TypeError(f"not a Redis URL or redis-py client: {type(client).__name__} (use a "
                    "redis:// or redis+cluster:// URL, redis.asyncio.Redis / RedisCluster, "
                    "or redis.Redis / redis.cluster.RedisCluster)")


def key_slot(key: str) -> int:
    """The cluster slot of ``key`` (its ``{hash tag}`` if it has one), as Redis computes it."""
    from redis.crc import key_slot as slot

    return int(slot(key.encode()))


def cluster_nodes(url: str) -> tuple[str, list[tuple[str, int]]]:
    """A ``redis+cluster://`` URL -> (the ``redis://`` URL of its first node, every node)."""
    scheme, _, rest = url.partition("://")
    parts = urlsplit(f"{CLUSTER_SCHEMES[scheme.lower()]}://{rest}")
    userinfo, at, hosts = parts.netloc.rpartition("@")
    nodes = []
    for host in hosts.split(","):
        name, _, port = host.strip().rpartition(":")
        if not name or not port.isdigit():
            raise ValueError(f"a redis+cluster:// URL names nodes as host:port,host:port...: "
                             f"{host!r}")
        nodes.append((name.strip("[]"), int(port)))
    first = parts._replace(netloc=f"{userinfo}{at}{hosts.split(',')[0].strip()}").geturl()
    return first, nodes


def transport_error(exc: BaseException) -> StreamflowError:
    """A redis-py exception as a streamflow error (connection trouble -> TransportError)."""
    import redis.exceptions as rexc

    if isinstance(exc, StreamflowError):
        return exc
    if isinstance(exc, (rexc.ConnectionError, rexc.TimeoutError, OSError, *_cluster_trouble())):
        return TransportError(f"redis: {exc or type(exc).__name__}")
    if isinstance(exc, rexc.ResponseError):
        return ProtocolError(f"redis refused a command: {exc}")
    return TransportError(f"redis: {type(exc).__name__}: {exc}")


def _cluster_trouble() -> tuple[type[Exception], ...]:
    """redis-py's errors for a cluster changing under a command (gone once it settled)."""
    import redis.exceptions as rexc

    names = ("ClusterDownError", "TryAgainError", "MovedError", "AskError",
             "SlotNotCoveredError", "RedisClusterUnreachableError")
    return tuple(getattr(rexc, name) for name in names if hasattr(rexc, name))


def _failing_over(exc: BaseException) -> bool:
    """Whether ``exc`` is what a command meets while a cluster node fails over."""
    import redis.exceptions as rexc

    settled = tuple(getattr(rexc, name) for name in
                    ("AuthenticationError", "AuthorizationError", "MaxConnectionsError",
                     "MaxClientsReachedError") if hasattr(rexc, name))
    if isinstance(exc, settled):
        return False
    return isinstance(exc, (rexc.ConnectionError, rexc.TimeoutError, TimeoutError, OSError,
                            *_cluster_trouble()))


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RedisLink:
    """redis-py on the running anyio backend; ``await link.call("xadd", ...)``.

    ``target`` is a URL or a redis-py client (see the module doc). A command is
    retried once on a fresh connection, and on a cluster for up to ``failover``
    seconds while a node fails over (see the module doc); ``socket_timeout``
    bounds every reply (readers set it above their ``BLOCK``): on asyncio as one
    ``asyncio.timeout`` around each attempt, since redis-py's own socket timeout
    starts a task per command (``asyncio.wait_for``) and arms a second timer per
    reply (about 6 % of the CPU of ``bench.redis``'s burst). A call cut by it
    closes its connection (redis-py drops a connection whose command or reply was
    interrupted) and is a :class:`~streamflow.core.errors.TransportError`.

    ``outage`` is true while a command waits out a failover; ``recovered`` is when
    the last one ended (readers do not count that time as the producer's silence).
    """

    def __init__(self, target: RedisTarget, *, socket_timeout: float | None = 30.0,
                 failover: float = FAILOVER) -> None:
        require("streamflow's Redis support", "redis", "redis")
        self.url = target if isinstance(target, str) else None
        self.own = isinstance(target, str)  # a client made here, closed here
        self._make: Callable[[], Any] | None = None
        if isinstance(target, str):
            self.cluster = is_cluster(target)
            self.threaded = not _on_asyncio()
            self._make = functools.partial(self._from_url, target, socket_timeout)
            self.client: Any = None if self.cluster and self.threaded else self._make()
        else:
            self.cluster, self.threaded = _kind(target)
            if not self.threaded and not _on_asyncio():
                raise TypeError("an asyncio redis-py client runs on asyncio only: on trio "
                                "pass redis.Redis or redis.cluster.RedisCluster (run in "
                                "worker threads), or a URL")
            if not _decodes(target):
                raise ValueError("streamflow reads Redis replies as text: make the client "
                                 "with decode_responses=True")
            self.client = target
        self.reply_timeout = None if self.threaded else socket_timeout  # ours, on asyncio
        self.failover = failover if self.cluster else 0.0
        if self.threaded:
            self.threads = anyio.CapacityLimiter(THREADS)
        self._lock: anyio.Lock | None = None  # made on first use, inside the event loop
        self._reached = False  # a command succeeded once: failover retries from then on
        self._failing = 0  # calls waiting out a failover right now
        self.recovered = 0.0  # anyio time the last failover wait ended

    @property
    def outage(self) -> bool:
        """Whether a command is waiting out a failover right now."""
        return self._failing > 0

    def _from_url(self, url: str, socket_timeout: float | None) -> Any:
        """The redis-py client for ``url`` (a sync cluster one connects: call it in a thread)."""
        import redis
        import redis.asyncio
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError as LostConnection
        from redis.exceptions import TimeoutError as NoReply

        backoff = ExponentialBackoff(cap=BACKOFF_CAP, base=BACKOFF_BASE)
        options: dict[str, Any] = dict(decode_responses=True,
                                       socket_timeout=socket_timeout if self.threaded else None,
                                       socket_connect_timeout=5.0,
                                       max_connections=MAX_CONNECTIONS)
        if self.cluster:
            first, nodes = cluster_nodes(url)
            if self.threaded:
                import redis.cluster

                return redis.cluster.RedisCluster.from_url(
                    first, startup_nodes=[redis.cluster.ClusterNode(h, p) for h, p in nodes],
                    retry=redis.retry.Retry(backoff, RETRIES), **options)
            from redis.asyncio.cluster import ClusterNode
            from redis.asyncio.retry import Retry

            return redis.asyncio.RedisCluster.from_url(
                first, startup_nodes=[ClusterNode(h, p) for h, p in nodes],
                retry=Retry(backoff, RETRIES), **options)
        options["retry_on_error"] = [LostConnection, NoReply]
        if self.threaded:
            return redis.Redis.from_url(url, retry=redis.retry.Retry(backoff, RETRIES), **options)
        from redis.asyncio.retry import Retry

        return redis.asyncio.Redis.from_url(url, retry=Retry(backoff, RETRIES), **options)

    async def _client(self) -> Any:
        if self.client is None:  # a sync cluster client connects when made: in a thread
            self._lock = self._lock or anyio.Lock()
            async with self._lock:
                if self.client is None:
                    assert self._make is not None
                    try:
                        self.client = await anyio.to_thread.run_sync(self._make,
                                                                     limiter=self.threads)
                    except Exception as exc:  # no node of the cluster answered
                        raise transport_error(exc) from exc
        return self.client

    def slot(self, key: str) -> int:
        """The slot of ``key`` on a cluster; 0 (one group) on one Redis."""
        return key_slot(key) if self.cluster else 0

    async def call(self, command: str, *args: Any, **kwargs: Any) -> Any:
        """Run one redis-py command (``"xadd"``, ``"xread"``...); errors -> streamflow errors."""
        client = self.client if self.client is not None else await self._client()
        method = getattr(client, command)
        return await self._retrying(functools.partial(method, *args, **kwargs))

    async def _attempt(self, work: Callable[[], Any]) -> Any:
        """``work()`` once: awaited (asyncio client) or in a worker thread (sync client)."""
        if self.threaded:
            return await anyio.to_thread.run_sync(work, limiter=self.threads,
                                                  abandon_on_cancel=True)
        if self.reply_timeout is None:
            return await work()
        async with asyncio.timeout(self.reply_timeout):
            return await work()

    async def _retrying(self, work: Callable[[], Any]) -> Any:
        """``work`` until it succeeds; on a cluster it reached, through a failover."""
        give_up: float | None = None
        delay = BACKOFF_BASE
        try:
            while True:
                try:
                    result = await self._attempt(work)
                except Exception as exc:
                    if not (self.failover and self._reached and _failing_over(exc)):
                        raise self._error(exc) from exc
                    now = anyio.current_time()
                    if give_up is None:
                        give_up = now + self.failover
                        self._failing += 1
                    if now >= give_up:
                        raise TransportError(f"redis cluster: still failing after "
                                             f"{self.failover:g} s: {self._error(exc)}") from exc
                    await anyio.sleep(min(delay, give_up - now))
                    delay = min(2 * delay, BACKOFF_CAP)
                    continue
                self._reached = True
                return result
        finally:
            if give_up is not None:
                self._failing -= 1
                self.recovered = anyio.current_time()

    def _error(self, exc: BaseException) -> StreamflowError:
        if isinstance(exc, TimeoutError) and self.reply_timeout is not None:
            return TransportError(f"redis: no reply within {self.reply_timeout:g} s")
        return transport_error(exc)

    async def pipeline(self, *commands: tuple[str, tuple[Any, ...], dict[str, Any]],
                       transaction: bool = True, raise_on_error: bool = True) -> list[Any]:
        """Several commands in one round trip (a MULTI/EXEC transaction unless told not).

        ``raise_on_error=False``: a command Redis refused is its reply (a redis-py
        ``ResponseError``; a :class:`~streamflow.core.errors.ProtocolError` for a lone
        command) instead of failing the whole call. A lone command outside a
        transaction is sent as itself: a redis-py pipeline of one costs a live reader
        about 0.1 ms more (``bench/README.md``, Redis Streams). On a cluster, every
        key of a transaction must be in one slot (a ``{hash tag}``); a pipeline
        outside one is split by node by redis-py.
        """
        if len(commands) == 1 and not transaction:
            name, args, kwargs = commands[0]
            try:
                return [await self.call(name, *args, **kwargs)]
            except ProtocolError as refused:  # Redis refused it
                if raise_on_error:
                    raise
                return [refused]
        client = self.client if self.client is not None else await self._client()

        def build() -> Any:
            pipe = client.pipeline(transaction=transaction)
            for name, args, kwargs in commands:
                getattr(pipe, name)(*args, **kwargs)
            return pipe.execute(raise_on_error=raise_on_error)

        # redis-py's cluster pipeline answers a connection lost mid-reply, or a slot that
        # moved, in the replies: raised here, the round trip is sent again
        check = _checked if self.cluster else list
        if self.threaded:
            return list(await self._retrying(lambda: check(build())))

        async def run() -> Any:
            return check(await build())

        return list(await self._retrying(run))

    async def on_node(self, key: str, *commands: Raw, wait: tuple[int, int] | None = None
                      ) -> list[Any]:
        """Raw commands on ``key``'s slot in one round trip on ONE connection (no
        transaction): a refused command's reply is its redis-py exception.

        ``wait=(replicas, ms)`` sends ``WAIT replicas ms`` after them, on that same
        connection -- WAIT counts the replicas that have every write its connection
        made, so redis-py's cluster pipeline, which may resend a failed command
        alone on another connection, cannot carry it. The reply of WAIT comes last.
        The round trip is retried whole (never one command of it) after a dropped
        connection, and on a cluster through a failover or a slot that moved; a
        retried round trip on a cluster first asks for ``key`` through redis-py's
        routing, so its slot map is current.
        """
        client = self.client if self.client is not None else await self._client()
        raw = [tuple(command) for command in commands]
        if wait is not None:
            raw.append(("WAIT", *wait))
        if not self.cluster:
            def plain() -> Any:
                pipe = client.pipeline(transaction=False)
                for command in raw:
                    pipe.execute_command(*command)
                return pipe.execute(raise_on_error=False)

            replies = await self._retrying(plain if self.threaded else _awaiting(plain))
            return list(replies)
        tries = 0

        def on_node_sync() -> list[Any]:
            nonlocal tries
            tries += 1
            if tries > 1:
                client.exists(key)  # through the routing: the slot map follows MOVED
            node = client.get_node_from_key(key)
            pipe = client.get_redis_connection(node).pipeline(transaction=False)
            for command in raw:
                pipe.execute_command(*command)
            return _checked(pipe.execute(raise_on_error=False))

        async def on_node_async() -> list[Any]:
            nonlocal tries
            from redis.asyncio.cluster import PipelineCommand

            tries += 1
            if tries > 1:
                await client.exists(key)
            await client.initialize()  # a no-op once it knows the slots
            node = client.get_node_from_key(key)
            queued = [PipelineCommand(n, *command) for n, command in enumerate(raw)]
            await node.execute_pipeline(queued)
            return _checked([command.result for command in queued])

        return list(await self._retrying(on_node_sync if self.threaded else on_node_async))

    async def aclose(self) -> None:
        """Close the connections of a client made here (shielded: it runs in ``finally``
        blocks of cancelled tasks); a client passed in stays open."""
        if not self.own or self.client is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                if self.threaded:
                    await anyio.to_thread.run_sync(self.client.close, limiter=self.threads)
                else:
                    await self.client.aclose()
            except Exception:  # closing a dead connection may fail: nothing to do
                pass


def _awaiting(work: Callable[[], Any]) -> Callable[[], Any]:
    """``work`` (which returns an awaitable) as a coroutine function."""

    async def run() -> Any:
        return await work()

    return run


def _checked(replies: list[Any]) -> list[Any]:
    """Raise the first reply that says the node is not the one to ask (connection lost,
    slot moved, cluster down): the round trip is then retried whole."""
    import redis.exceptions as rexc

    for reply in replies:
        if isinstance(reply, Exception) and (_failing_over(reply)
                                             or isinstance(reply, rexc.AskError)):
            raise reply
    return replies


def _decodes(client: Any) -> bool:
    """Whether a redis-py client decodes replies to ``str``."""
    encoder = getattr(client, "get_encoder", None) or client.connection_pool.get_encoder
    return bool(encoder().decode_responses)
