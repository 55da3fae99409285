"""What ``run()`` and ``stream()`` accept as a source, turned into one observable.

:func:`as_source` takes

* any streamflow source or reactivex ``Observable`` (``from_httpx``, ``from_bytes``,
  ``ReplaySource``, a pipeline you composed) -- used as it is;
* ``bytes`` -- a whole body already in memory;
* an async or sync iterable of ``bytes`` chunks (read once);
* an ``httpx.Response`` opened in streaming mode (``client.stream(...)`` /
  ``client.send(request, stream=True)``): its status is checked, its body read, and
  it is closed when the subscription ends.

Anything else is a ``TypeError`` that names what is accepted (a ``str`` body, an
unsent ``httpx.Request``...).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import anyio
from reactivex import Observable

from .._source import ChunkStream, Source
from .iterables import SyncSource, from_async_iterable, from_bytes, from_iterable

if TYPE_CHECKING:
    import httpx


ACCEPTED = ("a streamflow source (from_httpx(...), from_bytes(...), ReplaySource(...)) or any "
            "Observable, bytes, an (async) iterable of bytes chunks, or an httpx.Response "
            "opened with stream=True")


def _httpx() -> Any:
    """The httpx module if it is loaded (an httpx object implies it is)."""
    return sys.modules.get("httpx")


def as_source(source: Any, *, caller: str = "run()") -> Observable[Any]:
    """``source`` as an observable of body chunks or UniEvents (see the module doc)."""
    if isinstance(source, Observable):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return from_bytes(bytes(source))
    if isinstance(source, str):
        raise TypeError(f"{caller} got a str: a body is bytes (body.encode()); it accepts "
                        f"{ACCEPTED}")
    httpx = _httpx()
    if httpx is not None:
        if isinstance(source, httpx.Request):
            raise TypeError(f"{caller} got an httpx.Request, which streamflow does not send "
                            "by itself: pass from_httpx(client, request)")
        if isinstance(source, httpx.Response):
            return response_source(source)
    if isinstance(source, AsyncIterable):
        return from_async_iterable(source)
    if isinstance(source, Iterable):
        return from_iterable(source)
    raise TypeError(f"{caller} got {type(source).__name__}; it accepts {ACCEPTED}")


class ResponseSource(Source):
    """The body of an already opened async ``httpx.Response`` (one subscription)."""

    def __init__(self, response: httpx.Response) -> None:
        from ...core.limits import DEFAULT_LIMITS
        super().__init__(None)
        self.default_limits = DEFAULT_LIMITS
        self.response = response

    def map_error(self, exc: Exception) -> Exception:
        """httpx exceptions -> ``TransportError`` / ``StreamTimeoutError``."""
        from ._http_errors import transport_error
        return transport_error(exc)

    def open(self) -> ChunkStream:
        """Check the status, yield the body chunks, close the response on exit."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        from ._http_errors import MAX_ERROR_BODY, status_error
        response = self.response
        try:
            if not response.is_success:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) >= MAX_ERROR_BODY:
                        break
                raise status_error(response.status_code, response.headers,
                                   bytes(body[:MAX_ERROR_BODY]))
            yield response.aiter_bytes()
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()


def _sync_response(response: httpx.Response) -> SyncSource:
    from ._http_errors import MAX_ERROR_BODY, status_error, transport_error

    @contextmanager
    def opener() -> Iterator[Iterable[bytes]]:
        try:
            if not response.is_success:
                body = b"".join(response.iter_bytes())[:MAX_ERROR_BODY]
                raise status_error(response.status_code, response.headers, body)
            yield response.iter_bytes()
        finally:
            response.close()

    source = SyncSource(opener, blocking=True)
    source.map_error = transport_error  # type: ignore[method-assign]
    return source


def response_source(response: httpx.Response) -> Source:
    """A source over an opened ``httpx.Response`` (async or sync body stream)."""
    httpx = _httpx()
    if httpx is not None and isinstance(response.stream, httpx.AsyncByteStream):
        return ResponseSource(response)
    return _sync_response(response)
