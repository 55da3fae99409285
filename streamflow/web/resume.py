"""Resumable, shared web streams: answers produced into Redis, served and resumed from any instance.

::

    streams = ResumableStreams("redis://127.0.0.1:6379/0")
    app = Starlette(routes=[...], lifespan=streams.lifespan)

    async def chat(request):                   # POST /api/chat/{chat_id}
        await streams.start(chat_id, from_httpx(client, upstream_request))
        return await streams.response(request, chat_id, to="vercel-ui")

    async def resume(request):                 # GET /api/chat/{chat_id}/stream (AI SDK resume)
        return await streams.response(request, chat_id, to="vercel-ui")

:meth:`ResumableStreams.start` runs the producer in the app's task group (not the
request's): it reads the upstream to its end, bounded by the ``deadline`` limit,
into a :class:`~streamflow.sinks.redis.RedisStreamSink`, whether or not a client
is connected. :meth:`~ResumableStreams.response` serves the chat's latest stream
in ``uni`` SSE or a UI protocol (``vercel-ui``, ``ag-ui``), every SSE event with an
``id:``; a request with ``Last-Event-ID`` continues exactly after that event, on
any instance. UI encoders are stateful, so the stream is re-encoded from its start
and the bytes the client has are skipped; in ``uni``, the events the client has are
sent first as ``event: replay`` frames (a fresh streamflow decoder folds them into
the message without delivering them; a browser's ``onmessage`` ignores them). When
one entry encodes to several SSE events, all but its last carry ``<entry id>/<n>``
ids. No stream for the chat
(never started, expired) -> HTTP 204, the AI SDK's "nothing to resume".
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ..dialects import get_encoder
from ..dialects.encoder import Encoder
from ..dialects.frames_out import field_line
from ..errors import SinkError, StreamflowError
from ..events import UniEvent, event_from_dict
from ..limits import Limits
from ..runtime import run
from ..sinks.redis import RedisStreamSink
from ..sources.redis import HEARTBEAT_FRAME, sse_frame
from ..sources.redis_streams import (
    BEAT,
    END,
    EVENT,
    Entry,
    RedisLink,
    Tailer,
    entry_key,
    read_batches,
)

__all__ = ["ResumableStreams"]

log = logging.getLogger(__name__)
Position = tuple[tuple[int, int], int]  # (entry id, SSE event index within the entry)


def parse_last_event_id(value: str | None) -> Position | None:
    """``"<entry id>"`` or ``"<entry id>/<n>"`` -> the position it names (``None``: invalid)."""
    if not value:
        return None
    entry_id, _, index = value.strip().partition("/")
    try:
        return entry_key(entry_id), int(index) if index else 1 << 30
    except (StreamflowError, ValueError):
        return None


def entry_item(entry: Entry) -> UniEvent | StreamflowError:
    """The UniEvent (or the terminal typed error) stored in an entry."""
    from ..dialects.uni.decode import error_from_dict

    obj = json.loads(entry.data)
    if "error" in obj and "event_type" not in obj:
        return error_from_dict(obj["error"])
    return event_from_dict(obj)


def with_ids(chunk: bytes, entry_id: str) -> list[tuple[int, bytes]]:
    """Split an encoder's SSE output into events, each given its ``id:`` (see module doc)."""
    events = [e for e in chunk.split(b"\n\n") if e.strip()]
    out = []
    for index, event in enumerate(events):
        name = entry_id if index == len(events) - 1 else f"{entry_id}/{index}"
        out.append((index, field_line("id", name) + event + b"\n\n"))
    return out


def _position_id(position: Position) -> str:
    """The canonical id of a parsed ``Last-Event-ID`` (never the client's own text)."""
    (ms, seq), index = position
    return f"{ms}-{seq}" + (f"/{index}" if index != 1 << 30 else "")


class ResumableStreams:
    """Chats whose answers live in Redis (see the module doc).

    * ``url`` -- the Redis URL shared by every instance; ``prefix`` -- its key prefix.
    * ``maxlen``, ``ttl``, ``heartbeat`` -- of each stream's :class:`RedisStreamSink`.
    * ``limits`` -- the producer's limits; its ``deadline`` (default 600 s) bounds an
      answer that nobody reads any more.
    """

    def __init__(self, url: str, *, prefix: str = "streamflow:", maxlen: int = 100_000,
                 ttl: float = 3600.0, heartbeat: float = 2.0,
                 limits: Limits | None = None) -> None:
        self.url = url
        self.prefix = prefix
        self.maxlen = maxlen
        self.ttl = ttl
        self.heartbeat = heartbeat
        self.limits = limits or Limits(deadline=600.0)
        self._group: TaskGroup | None = None
        self._link: RedisLink | None = None
        self._tailer: Tailer | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ResumableStreams]:
        """Hold the task group producers run in (the app's lifetime); cancels them on exit."""
        self._link = RedisLink(self.url)  # one connection pool for every stream of the app
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                self._tailer = Tailer(self._link)
                group.start_soon(self._tailer.run, name="streamflow-redis-tailer")
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

    def _pointer(self, chat_id: str) -> str:
        return f"{self.prefix}chat:{chat_id}"

    async def start(self, chat_id: str, source: Any, *, dialect: str = "auto",
                    **options: Any) -> str:
        """Start a fresh answer for ``chat_id`` from ``source``; returns its stream key.

        The answer becomes the chat's latest (what :meth:`response` serves); the
        ``start`` entry is written before this returns, so a reader may connect at once.
        """
        if self._group is None:
            raise RuntimeError("ResumableStreams is not running: pass lifespan=streams.lifespan "
                               "to the app (or use `async with streams.running():`)")
        key = f"{self.prefix}stream:{chat_id}:{uuid.uuid4().hex}"
        sink = RedisStreamSink(self.url, key, maxlen=self.maxlen, ttl=self.ttl,
                               heartbeat=self.heartbeat, link=self._link)
        await sink.start(self._group)
        await self.link.call("set", self._pointer(chat_id), key, ex=max(86400, int(self.ttl)))
        self._group.start_soon(self._produce, sink, source, dialect, options,
                               name=f"streamflow-producer:{key}")
        return key

    async def _produce(self, sink: RedisStreamSink, source: Any, dialect: str,
                       options: dict[str, Any]) -> None:
        try:
            await run(source, sink, dialect=dialect, limits=self.limits, **options)
        except SinkError as error:  # Redis failed under the producer: readers time out
            log.warning("writing %s to Redis failed: %s", sink.key, error)
        except StreamflowError:
            pass  # written to the stream as its terminal entry
        except Exception:
            log.exception("producer of %s failed", sink.key)
            raise
        finally:
            await sink.aclose()

    async def response(self, request: Request | None, chat_id: str, *, to: str = "uni",
                       last_event_id: str | None = None,
                       headers: Mapping[str, str] | None = None, **flavour: Any) -> Response:
        """The chat's latest answer as SSE in ``to`` (``uni``, ``vercel-ui`` or ``ag-ui``).

        Resumes after ``last_event_id`` (default: the request's ``Last-Event-ID``);
        HTTP 204 when the chat has no stream. ``flavour`` goes to the encoder (the
        message id of the UI protocols defaults to one derived from the stream key,
        so every instance writes the same bytes).
        """
        if last_event_id is None and request is not None:
            last_event_id = request.headers.get("last-event-id")
        key = await self.link.call("get", self._pointer(chat_id))
        exists = bool(key) and bool(await self.link.call("exists", key))
        if not exists:
            return Response(status_code=204)
        encoder = None if to == "uni" else _encoder(to, str(key), chat_id, flavour)
        body = self._body(str(key), encoder, parse_last_event_id(last_event_id),
                          last_event_id)
        return StreamingResponse(body, media_type="text/event-stream",
                                 headers={**_headers(to), **(headers or {})})

    async def _body(self, key: str, encoder: Encoder | None, after: Position | None,
                    raw_after: str | None) -> AsyncIterator[bytes]:
        caught_up = after is None
        try:
            async for batch in read_batches(self.link, key, tailer=self._tailer):
                out = bytearray()
                for entry in batch:
                    if entry.kind == BEAT:
                        if caught_up:
                            out += HEARTBEAT_FRAME
                    elif entry.kind in (EVENT, END) and encoder is None:
                        if after is not None and (entry_key(entry.id), 0) <= after:
                            out += sse_frame(_position_id(after), entry.data, replay=True)
                        else:
                            caught_up = True
                            out += sse_frame(entry.id, entry.data)
                    elif entry.kind in (EVENT, END) and encoder is not None:
                        position = entry_key(entry.id)
                        item = entry_item(entry)
                        chunk = encoder.fail(item) if isinstance(item, StreamflowError) \
                            else encoder.feed(item)
                        for index, event in with_ids(chunk, entry.id):
                            if after is None or (position, index) > after:
                                caught_up = True
                                out += event
                if out:
                    yield bytes(out)  # one write per read: fewer sends under load
        except StreamflowError as error:  # the producer died, Redis went away...
            yield _error_bytes(encoder, error)


def _encoder(to: str, key: str, chat_id: str, flavour: dict[str, Any]) -> Encoder:
    stable = uuid.uuid5(uuid.NAMESPACE_URL, key).hex
    if to == "vercel-ui":
        flavour = {"message_id": f"msg_{stable}", **flavour}
    elif to == "ag-ui":
        flavour = {"message_id": f"msg_{stable}", "thread_id": chat_id, "run_id": stable,
                   **flavour}
    return get_encoder(to)(**flavour)


def _headers(to: str) -> dict[str, str]:
    if to == "vercel-ui":
        from ..dialects.vercel_ui.encode import HEADERS

        return dict(HEADERS)
    return {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _error_bytes(encoder: Encoder | None, error: StreamflowError) -> bytes:
    if encoder is None:
        from ..dialects.uni.decode import encode_sse

        return encode_sse(error)
    return b"" if encoder.finished else encoder.fail(error)
