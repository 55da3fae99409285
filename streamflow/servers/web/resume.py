"""Resumable, shared web streams: answers produced into Redis, served and resumed from any instance.

::

    streams = ResumableStreams("redis://127.0.0.1:6379/0")   # or "redis+cluster://h1:7000,h2:7000"
    app = Starlette(routes=[...], lifespan=streams.lifespan)

    async def chat(request):                   # POST /api/chat/{chat_id}
        source = from_httpx(client, upstream_request)
        return await streams.create(request, chat_id, source, target="vercel-ui")

    async def resume(request):                 # GET /api/chat/{chat_id}/stream (AI SDK resume)
        return await streams.response(request, chat_id, target="vercel-ui")

:meth:`ResumableStreams.create` starts a fresh answer and streams it: the producer
runs in the app's task group (not the request's) and reads the upstream to its end,
bounded by the ``deadline`` limit, into a :class:`~streamflow.reactive.sinks.redis.RedisStreamSink`,
whether or not a client is connected. :meth:`~ResumableStreams.response` serves the
chat's latest answer in ``uni`` SSE or a UI protocol (``vercel-ui``, ``ag-ui``), every
SSE event with an ``id:``; a request with ``Last-Event-ID`` continues exactly after
that event, on any instance (see ``web._resume_body``). No stream for
the chat (never started, expired) -> HTTP 204, the AI SDK's "nothing to resume".

Who may do that (see ``web._resume_access`` and docs/SECURITY.md): chat
ids are checked before they become keys (400); the first answer of a chat returns a
resume token (``x-resume-token``) that later requests of the chat must present
(else 403), and an ``authorize`` hook may refuse any request (403); ``max_live`` and
``max_live_per_client`` cap the producers running (429). Refusals, and a Redis that
still fails after one retry (503), are answered in the protocol's own error shape.

:meth:`ResumableStreams.stop` stops a chat's running answer from any instance: it
sets a control key in Redis that the producer's instance (wherever it runs) checks every
``STOP_POLL`` seconds, for all its answers in one round trip (``web._resume_stop``); the
producer is cancelled (its upstream request closed), the stream ends with a
``cancelled`` terminal entry after the partial, so every reader ends, and
``on_finish(answer, status="aborted")`` is called. ``on_finish`` is called once per
answer on the instance that ended it (``completed``, ``failed`` with the
partial, ``aborted`` when stopped or the app shut down).

On a Redis Cluster (a ``redis+cluster://`` URL or a redis-py ``RedisCluster``) every key
of a chat carries the chat id as its hash tag, so it lives in one slot
(``web._resume_access.ChatKeys``); the shared read groups its keys by slot, each group
read on the node serving it, and a failover is waited out (``reactive._redis``).
``replicas=1`` makes each producer wait, per batch, until a replica has its entries
(``RedisStreamSink``): then a primary killed mid-answer loses nothing; without it, the
readers of an answer that lost entries end with :class:`StreamGapError` naming them.

**An answer that outlives its producer** (``chains={"name": Failover(...)}``, the same on
every instance): an answer started from such a chain's source keeps its recipe (the chain's
name, the neutral request) beside its stream, and its producer a lease, renewed every
heartbeat. When the producer dies -- SIGKILL, a lost machine -- the lease lapses, one other
instance claims it, reads the answer so far from the stream and continues it there: the
chain is asked again with it as the assistant's prefix and the continuation is written on
into the same stream, so its readers (who wait :data:`~web._resume_lease.WINDOW_BEATS`
heartbeats without an entry) read one answer, nothing repeated
(``web._resume_lease``). An instance that shuts down (its lifespan ends: SIGTERM) hands
its unfinished ones over the same way, at once. A producer that finds its lease taken
stops writing at once.
Byte sources and Agent runs are not taken over: their readers end as before.

The producer side is :func:`launch` (the chat's token kept or issued, the stream's
``start`` entry written, the chat pointed at it), :func:`produce`, the one producer of
byte sources, UniEvent sources and Agent runs alike, and :func:`take_over`.
"""

from __future__ import annotations

import functools
import inspect
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ...app.agent import AgentEvent
from ...app.failover import Failover, FailoverSource
from ...app.runtime import run
from ...core.errors import (
    CancelledStreamError,
    SinkError,
    StreamflowError,
    StreamGapError,
    StreamTimeoutError,
    TransportError,
)
from ...core.events import UniEvent
from ...core.limits import Limits
from ...reactive._redis.link import RedisLink, RedisTarget, is_cluster
from ...reactive._redis.streams import END, EVENT, parse_entry
from ...reactive._redis.tailer import Tailer
from ...reactive.sinks.redis import RedisStreamSink
from ...wire.dialects.ui_agent import agent_record
from ...wire.redaction import redacting_logger
from ._answer import AnswerRecorder, FinishStatus, OnFinish, call_on_finish
from ._drive import AgentRun, run_agent
from ._resume_access import (
    RESUME_TARGETS,
    TOKEN_HEADER,
    ChatKeys,
    LiveStreams,
    ResumeRefused,
    Slot,
    Started,
    check_chat_id,
    forbidden,
    peer_address,
    point,
    presented_token,
    refusal,
    token_matches,
    token_to_keep,
)
from ._resume_body import encoder_for, entry_item, headers_for, sse_body
from ._resume_lease import WINDOW_BEATS, Lease, Leases, read_recipe, recipe_of, watch
from ._resume_stop import StopWatch, request_stop, stop_key

__all__ = ["Authorize", "ClientKey", "ResumableStreams", "ResumeRefused", "Started",
           "StreamGapError"]


Authorize = Callable[[Request, str], Awaitable[bool]]
ClientKey = Callable[[Request], "str | Awaitable[str | None] | None"]


class ResumableStreams:
    """Chats whose answers live in Redis (see the module doc).

    * ``url`` -- the Redis shared by every instance: a ``redis://`` URL, a Redis
      Cluster's ``redis+cluster://host:port,host:port`` or a redis-py client
      (``redis.asyncio.Redis``/``RedisCluster``; on trio ``redis.Redis``/
      ``redis.cluster.RedisCluster``, which stays open); ``prefix`` -- its key prefix
      (on a cluster without ``{`` or ``}``: the chat id is the hash tag).
    * ``maxlen``, ``ttl``, ``heartbeat``, ``replicas``, ``replica_timeout`` -- of each
      stream's :class:`RedisStreamSink` (``replicas=1``: no entry lost when a primary
      dies; see the module doc).
    * ``limits`` -- the producer's limits; its ``deadline`` (default 600 s) bounds an
      answer that nobody reads any more.
    * ``authorize`` -- ``async (request, chat_id) -> bool``, asked before every
      :meth:`create` and :meth:`response` with a request; ``False`` is a 403.
    * ``tokens`` -- require the chat's resume token (default ``True``; turn it off
      only when ``authorize`` ties chats to your own users).
    * ``max_live`` -- producers running at once in this app (default 1000);
      ``max_live_per_client`` -- per client key (default: no cap), the key given by
      ``client_key(request)`` (default: the peer address). One more is a 429.
    * ``on_finish`` -- ``(answer, *, status)``, sync or async, called once per answer
      this instance produced (see the module doc); :meth:`start` may override it.
    * ``chains`` -- :class:`~streamflow.app.failover.Failover` chains by name, the same on
      every instance: an answer started from one (``chain.source(...)``) outlives its
      producer -- the producer holds a lease, and when it dies another instance takes it
      and continues the answer from what is in Redis (see the module doc).
    """

    def __init__(self, url: RedisTarget, *, prefix: str = "streamflow:",
                 maxlen: int = 100_000, ttl: float = 3600.0, heartbeat: float = 2.0,
                 limits: Limits | None = None, authorize: Authorize | None = None,
                 tokens: bool = True, max_live: int | None = 1000,
                 max_live_per_client: int | None = None, client_key: ClientKey | None = None,
                 on_finish: OnFinish | None = None, replicas: int = 0,
                 replica_timeout: float = 1.0,
                 chains: Mapping[str, Failover] | None = None) -> None:
        self.url = url
        self.chains = dict(chains or {})
        self.instance = uuid.uuid4().hex  # who holds a lease, in Redis
        self.on_finish = on_finish
        self.prefix = prefix
        self.keys = ChatKeys(prefix, is_cluster(url))
        self.replicas = replicas
        self.replica_timeout = replica_timeout
        self.maxlen = maxlen
        self.ttl = ttl
        self.heartbeat = heartbeat
        self.limits = limits or Limits(deadline=600.0)
        self.authorize = authorize
        self.tokens = tokens
        self.client_key = client_key or peer_address
        self.live = LiveStreams(max_live, max_live_per_client)
        self._group: TaskGroup | None = None
        self._link: RedisLink | None = None
        self._tailer: Tailer | None = None
        self._stops: StopWatch | None = None
        self._leases: Leases | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ResumableStreams]:
        """Hold the task group producers run in (the app's lifetime); cancels them on exit."""
        self._link = RedisLink(self.url)  # one connection pool for every stream of the app
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                self._tailer = Tailer(self._link)
                group.start_soon(self._tailer.run, name="streamflow-redis-tailer")
                self._stops = StopWatch(self._link)
                group.start_soon(self._stops.run, name="streamflow-resume-stops")
                self._leases = Leases(self)
                if self.chains:
                    group.start_soon(warden, self, group, name="streamflow-resume-warden")
                    group.start_soon(self.leases.run, name="streamflow-resume-leases")
                try:
                    yield self
                finally:
                    self._group = None
                    group.cancel_scope.cancel()
        finally:
            link, self._link = self._link, None
            await link.aclose()

    def lifespan(self, app: Any) -> AbstractAsyncContextManager[None]:
        """A starlette/FastAPI ``lifespan=`` that runs :meth:`running`."""

        @asynccontextmanager
        async def span() -> AsyncIterator[None]:
            async with self.running():
                yield

        return span()

    @property
    def link(self) -> RedisLink:
        """The app's Redis connection pool (while :meth:`running`)."""
        if self._link is None:
            raise RuntimeError("ResumableStreams is not running: pass lifespan=streams.lifespan "
                               "to the app (or use `async with streams.running():`)")
        return self._link

    @property
    def stops(self) -> StopWatch:
        """The watch over the stop keys of this instance's answers (while :meth:`running`)."""
        if self._stops is None:
            raise RuntimeError("ResumableStreams is not running")
        return self._stops

    @property
    def leases(self) -> Leases:
        """The leases this instance's producers hold, renewed together (while :meth:`running`)."""
        if self._leases is None:
            raise RuntimeError("ResumableStreams is not running")
        return self._leases

    async def stop(self, chat_id: str) -> bool:
        """Stop the chat's running answer, on whichever instance produces it.

        Sets the stream's stop key; its producer sees it within ``STOP_POLL`` (0.25) s,
        closes the upstream and ends the stream with a ``cancelled`` terminal entry
        (readers keep the partial). False when the chat has no stream. Raises
        :class:`ResumeRefused` for a bad id, :class:`TransportError` for Redis.
        """
        pointer, _ = self._keys(check_chat_id(chat_id))
        return await request_stop(self.link, pointer, self.prefix, self.ttl)

    async def stop_response(self, request: Request, chat_id: str) -> Response:
        """Answer a client's stop request: authorized and token-checked like a resume, then
        :meth:`stop`; 204 when stopped (or nothing runs), the refusal otherwise (JSON)."""
        try:
            await self._authorized(request, chat_id)
            if await self._latest(check_chat_id(chat_id), presented_token(request)):
                await self.stop(chat_id)
        except StreamflowError as error:
            return refusal(error, "uni")
        return Response(status_code=204)

    def _keys(self, chat_id: str) -> tuple[str, str]:
        """The chat's pointer (to its latest stream) and its token hash."""
        return self.keys.pointer(chat_id), self.keys.token(chat_id)

    async def start(self, chat_id: str, source: Any, *, token: str | None = None,
                    client: str | None = None, dialect: str = "auto",
                    on_finish: OnFinish | None = None, message_id: str | None = None,
                    **options: Any) -> Started:
        """Start a fresh answer for ``chat_id`` from ``source``; the chat's latest from now.

        ``source`` is a byte or UniEvent source, or an :func:`~streamflow.servers.web.agent_run`:
        a whole Agent run, each of its events one entry (its record, see
        :mod:`streamflow.wire.dialects.ui_agent`), served in ``vercel-ui`` and ``ag-ui`` as
        one UI message (``uni`` readers get the records as they are).

        ``token`` is the chat's resume token (needed unless this is its first answer);
        ``client`` the client key counted against ``max_live_per_client``;
        ``on_finish`` replaces the app's for this answer; ``message_id`` names the
        answer's UI message on every instance that serves it (and ``on_finish``'s
        answer), kept in Redis beside the stream (default: the id of the message an
        :func:`~streamflow.servers.web.agent_answer` run continues, else one derived
        from the stream key). Raises
        :class:`ResumeRefused` (bad id 400, wrong token 403), :class:`LimitExceededError`
        (too many live streams) or :class:`TransportError` (Redis). The ``start``
        entry is written before this returns, so a reader may connect at once.
        """
        if self._group is None:
            raise RuntimeError("ResumableStreams is not running: pass lifespan=streams.lifespan "
                               "to the app (or use `async with streams.running():`)")
        chat_id = check_chat_id(chat_id)
        slot = self.live.reserve(client)
        try:
            return await launch(self, self._group, chat_id, source, token, slot, dialect,
                                {**options, "_on_finish": on_finish or self.on_finish},
                                message_id or _continued_id(source))
        except BaseException:
            slot.release()
            raise

    async def create(self, request: Request, chat_id: str, source: Any, *, target: str = "uni",
                     dialect: str = "auto", options: Mapping[str, Any] | None = None,
                     headers: Mapping[str, str] | None = None,
                     on_finish: OnFinish | None = None, **flavour: Any) -> Response:
        """Start a fresh answer for the chat and stream it (see :meth:`start`, :meth:`response`).

        The request is authorized, its token (when the chat has one) checked and its
        client counted; the response carries the chat's token in ``x-resume-token``.
        A refusal or a Redis failure is the protocol's error answer, never a 500.
        ``options`` go to the producer's ``run()``, ``flavour`` to the encoder;
        ``on_finish`` replaces the app's for this answer.
        """
        _check_target(target)
        try:
            await self._authorized(request, chat_id)
            client = self.client_key(request)
            if inspect.isawaitable(client):
                client = await client
            named = flavour.get("message_id") or _continued_id(source)
            started = await self.start(chat_id, source, token=presented_token(request),
                                       client=client, dialect=dialect, on_finish=on_finish,
                                       message_id=named, **(options or {}))
            if named and target != "uni":  # known here: no need to read it back
                flavour = {**flavour, "message_id": named}
        except StreamflowError as error:
            return refusal(error, target)
        return self._serve(started.key, started.chat_id, target, request, "", headers, flavour,
                           token=started.token)  # "": a fresh answer is sent from its start

    async def response(self, request: Request | None, chat_id: str, *, target: str = "uni",
                       last_event_id: str | None = None, token: str | None = None,
                       headers: Mapping[str, str] | None = None, **flavour: Any) -> Response:
        """The chat's latest answer as SSE in ``target`` (``uni``, ``vercel-ui`` or ``ag-ui``).

        Resumes after ``last_event_id`` (default: the request's ``Last-Event-ID``).
        ``token`` defaults to the request's (``x-resume-token`` header or
        ``resume_token`` query parameter). HTTP 204 when the chat has no stream; a bad
        id (400), a refusal (403) or Redis down (503) in the protocol's error shape.
        ``flavour`` goes to the encoder (the message id of the UI protocols defaults to
        the one the answer was started with, else one derived from the stream key, so
        every instance writes the same bytes).
        """
        _check_target(target)
        try:
            if request is not None:
                await self._authorized(request, chat_id)
            key = await self._latest(check_chat_id(chat_id), token or presented_token(request))
            if key is not None:
                flavour = await self._named(key, target, flavour)
        except StreamflowError as error:
            return refusal(error, target)
        if key is None:
            return Response(status_code=204)
        return self._serve(key, chat_id, target, request, last_event_id, headers, flavour)

    async def _named(self, key: str, target: str, flavour: dict[str, Any]) -> dict[str, Any]:
        """``flavour`` with the message id the answer of stream ``key`` was started with."""
        if target == "uni" or "message_id" in flavour:
            return flavour
        stored = await self.link.call("get", message_key(key))
        return {**flavour, "message_id": str(stored)} if stored else flavour

    async def _authorized(self, request: Request, chat_id: str) -> None:
        check_chat_id(chat_id)
        if self.authorize is not None and not await self.authorize(request, chat_id):
            raise forbidden("not allowed")

    async def _latest(self, chat_id: str, token: str | None) -> str | None:
        """The chat's latest stream key, if there is one and ``token`` may read it."""
        pointer, token_key = self._keys(chat_id)
        key, stored = await self.link.pipeline(("get", (pointer,), {}),
                                               ("get", (token_key,), {}), transaction=False)
        if self.tokens and (stored is not None or key is not None) \
                and not token_matches(stored, token):
            raise forbidden()
        if not key or not await self.link.call("exists", key):
            return None
        return str(key)

    def _serve(self, key: str, chat_id: str, target: str, request: Request | None,
               last_event_id: str | None, headers: Mapping[str, str] | None,
               flavour: dict[str, Any], *, token: str | None = None) -> Response:
        if last_event_id is None and request is not None:
            last_event_id = request.headers.get("last-event-id")
        encoder = encoder_for(target, key, chat_id, flavour)
        body = sse_body(self.link, key, self._tailer, encoder, last_event_id)
        extra = {TOKEN_HEADER: token} if token else {}
        return StreamingResponse(body, media_type="text/event-stream",
                                 headers={**headers_for(target), **extra, **(headers or {})})


def _check_target(target: str) -> None:
    if target not in RESUME_TARGETS:
        raise ValueError(f"unknown target {target!r}: use one of {', '.join(RESUME_TARGETS)}")

log = redacting_logger("streamflow.servers.web.resume")  # no credential in a line


def _continued_id(source: Any) -> str | None:
    """The id of the client's message an ``agent_answer`` run goes on with, if any."""
    if isinstance(source, AgentRun) and source.continues:
        return str(source.continues.get("id") or "") or None
    return None


def message_key(key: str) -> str:
    """Where the message id of stream ``key``'s answer is kept."""
    return f"{key}:message"


async def launch(streams: ResumableStreams, group: TaskGroup, chat_id: str, source: Any,
                 token: str | None, slot: Slot, dialect: str,
                 options: dict[str, Any], message_id: str | None = None) -> Started:
    """Start a fresh answer of ``chat_id`` (checked) in ``group``; the chat points at it."""
    link = streams.link
    pointer, token_key = streams._keys(chat_id)
    if streams.tokens:
        token = await token_to_keep(link, token_key, token)
    key = streams.keys.stream(chat_id, uuid.uuid4().hex)
    recipe = recipe_of(streams, source)
    lease = Lease(streams, key) if recipe is not None else None
    if lease is not None and recipe is not None:  # first: the stream's writes are fenced by it
        await lease.take(recipe)
    sink = stream_sink(streams, key, lease)
    life = max(86400, int(streams.ttl))
    try:
        await sink.start(group)
        if message_id:  # before the pointer: a reader that finds the stream finds its id
            await link.call("set", message_key(key), message_id, ex=life)
        await point(link, pointer, key, life, token_key, token if streams.tokens else None)
    except BaseException:
        if lease is not None:
            await lease.release()
        await sink.aclose()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await link.call("delete", key)  # nobody can reach it: do not keep it
            except StreamflowError:
                pass  # it expires with the sink's ttl
        raise
    group.start_soon(produce, sink, source, dialect, options, slot, streams.stops,
                     stop_key(streams.prefix, key), streams.limits, message_id, lease,
                     name=f"streamflow-producer:{key}")
    return Started(chat_id, key, token if streams.tokens else None)


async def produce(sink: RedisStreamSink, source: Any, dialect: str, options: dict[str, Any],
                  slot: Slot, stops: StopWatch, stop_key: str, limits: Limits,
                  message_id: str | None = None, lease: Lease | None = None,
                  earlier: Sequence[UniEvent] = ()) -> None:
    """Run ``source`` -- a byte or UniEvent source, or an :class:`AgentRun` (one entry per
    record, ``run.end`` the last) -- into ``sink`` until it ends or ``stop_key`` appears;
    then ``on_finish``, once, with what the readers saw and how it ended. With a
    ``lease`` the stream is this producer's while it keeps the lease: it renews it, and
    one it loses (another instance took the answer over) ends it with no entry more;
    ``earlier`` are the answer's events written by an earlier producer."""
    on_finish = options.pop("_on_finish", None)
    recorder = AnswerRecorder(message_id)
    for event in earlier:  # what the readers have already: part of the answer
        await recorder.on_event(event)
    status: FinishStatus = "aborted"  # unless the run ends by itself
    stopped = lost = False

    async def write_record(ev: AgentEvent) -> None:
        record = agent_record(ev)
        if record is not None:
            await sink.on_record(json.dumps(record, separators=(",", ":")),
                                 last=record["agent"] == "run.end")

    async def drive() -> None:
        if not isinstance(source, AgentRun):
            await run(source, sink, recorder, dialect=dialect, limits=limits, **options)
            return
        try:
            with anyio.fail_after(limits.deadline) if limits.deadline else nullcontext():
                await run_agent(source, write_record, (recorder,))
        except TimeoutError:
            error = StreamTimeoutError("deadline", limits.deadline or 0.0)
            await recorder.on_end(error)
            raise error from None

    async def work() -> None:
        nonlocal status, lost
        try:
            await drive()
            status = "failed" if recorder.answer.error is not None else "completed"
        except SinkError as error:  # Redis failed under the producer: readers time out
            status = "failed"
            if sink.lease_lost:  # or another instance took the answer over: it writes on
                lost = True
                return
            log.warning("writing %s to Redis failed: %s", sink.key, error)
        except StreamflowError as error:
            status = "failed"
            await sink.on_end(error)  # the terminal entry (written already by a run)
        except Exception:
            log.exception("producer of %s failed", sink.key)
            raise

    async def leased() -> None:
        nonlocal lost
        assert lease is not None
        async with anyio.create_task_group() as group:
            async def keep() -> None:
                nonlocal lost
                lost = not await lease.keep()
                sink.abandon()  # lost: another instance writes on; not one entry more
                group.cancel_scope.cancel()

            group.start_soon(keep)
            try:
                await work()
            finally:
                group.cancel_scope.cancel()

    try:
        stopped = await stops.until_stopped(stop_key, work if lease is None else leased)
    finally:
        slot.release()
        # cancelled before the answer ended (the app shuts down): another instance goes on
        handing = lease is not None and not lost and not sink.finished
        with anyio.CancelScope(shield=True):
            if handing:
                log.info("%s: this instance stops: the answer is handed over", sink.key)
            if lost:
                log.warning("%s: the lease was lost (taken over elsewhere): this producer "
                            "stops writing", sink.key)
            elif stopped and not sink.finished:
                try:
                    await sink.on_end(CancelledStreamError("the answer was stopped"))
                except StreamflowError as error:
                    log.warning("ending %s failed: %s", sink.key, error)
            await sink.aclose()
            if lease is not None and not lost:
                await lease.release(hand_over=handing)
            if not (lost or handing):  # the instance that takes it over calls it at the end
                try:
                    await call_on_finish(on_finish, recorder.finish(), status)
                except Exception:
                    log.exception("on_finish of %s failed", sink.key)


# -- an answer that outlives its producer (web._resume_lease) ------------------------------
def stream_sink(streams: ResumableStreams, key: str, lease: Lease | None) -> RedisStreamSink:
    """The sink writing stream ``key`` (its readers wait longer when it can be taken over)."""
    return RedisStreamSink(streams.url, key, maxlen=streams.maxlen, ttl=streams.ttl,
                           heartbeat=streams.heartbeat, link=streams.link,
                           replicas=streams.replicas, replica_timeout=streams.replica_timeout,
                           window=WINDOW_BEATS * streams.heartbeat if lease else None,
                           fence=(lease.lease_key, lease.holder) if lease else None)


async def warden(streams: ResumableStreams, group: TaskGroup) -> None:
    """This instance's watch over the leases of every instance's answers."""
    await watch(streams, functools.partial(take_over, streams, group))


async def take_over(streams: ResumableStreams, group: TaskGroup, key: str) -> None:
    """Continue the answer of stream ``key``, whose producer's lease lapsed, here: claim the
    lease (one instance does), read the answer so far from the stream, ask its chain
    again with it as the prefix (:class:`~streamflow.app.failover.FailoverSource`
    ``earlier=``), and write on into the same stream (:meth:`RedisStreamSink.take_over`)."""
    lease = Lease(streams, key)
    link = streams.link
    try:
        if not await lease.claim():
            return
        recipe = read_recipe(streams, await link.call("get", lease.recipe_key))
        if recipe is None:
            await lease.release()
            return
        entries = [parse_entry(e) for e in await link.call("xrange", key, "-", "+")]
        if not entries or any(e.kind == END for e in entries):
            await lease.release()  # it ended after all (or expired): nothing to continue
            return
        slot = streams.live.reserve(None)
    except StreamflowError as error:  # Redis away, or too many answers here: the lease
        log.warning("taking %s over failed: %s", key, error)  # lapses for another try
        return
    earlier = [item for item in (entry_item(e) for e in entries if e.kind == EVENT)
               if isinstance(item, UniEvent)]
    chain, request = recipe
    cause = TransportError("the instance producing this answer went away")
    source = FailoverSource(chain, request, chain.send, earlier=(earlier, cause))
    sink = stream_sink(streams, key, lease)
    try:
        if not await sink.take_over(group):
            slot.release()
            await lease.release()
            return
        message_id = await link.call("get", message_key(key))
    except StreamflowError as error:
        slot.release()
        log.warning("taking %s over failed: %s", key, error)
        return
    log.info("%s: its producer went away; this instance continues the answer", key)
    group.start_soon(produce, sink, source, "auto", {"_on_finish": streams.on_finish}, slot,
                     streams.stops, stop_key(streams.prefix, key), streams.limits,
                     str(message_id) if message_id else None, lease, earlier,
                     name=f"streamflow-producer:{key}")
