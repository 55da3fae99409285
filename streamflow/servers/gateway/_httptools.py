"""uvicorn's httptools protocol with the gateway's head limits (imported when httptools is).

httptools (llhttp, in C) parses a request and frames a response with about a
third less CPU than h11 (``bench/README.md``), but uvicorn puts no cap on a
request head under it. :class:`HeadLimitedHttpToolsProtocol` adds the two limits the h11
protocol has here: the head's size (``max_header_bytes``: the URL and header
lines as parsed, and the bytes received while a head is unfinished, so one
endless header cannot pile up in the parser) and its time (``header_timeout``,
the slowloris guard of :mod:`streamflow.servers.gateway.server`). Over the size the
connection gets a 400 and is closed, as uvicorn's h11 protocol does.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .limits import DEFAULT_SERVER_LIMITS, _HeadTimer


class HeadTooLarge(Exception):
    """Raised inside a parser callback: uvicorn answers it with a 400 and closes."""


class HeadLimitedHttpToolsProtocol(_HeadTimer, HttpToolsProtocol):
    """uvicorn's httptools protocol, refusing a request head too large or too slow."""

    __slots__ = ("_in_head", "_received", "_parsed")  # see _HeadTimer: keeps __dict__ shared
    max_header_bytes: int = DEFAULT_SERVER_LIMITS.max_header_bytes

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._in_head, self._received, self._parsed = True, 0, 0
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._received += len(data)
        super().data_received(data)
        if self._in_head and self._received > self.max_header_bytes \
                and not self.transport.is_closing():
            self.send_400_response("Request head too large.")

    def on_message_begin(self) -> None:
        self._in_head, self._received, self._parsed = True, 0, 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _count(self, size: int) -> None:
        self._parsed += size
        if self._parsed > self.max_header_bytes:
            raise HeadTooLarge(f"the request head is over {self.max_header_bytes} bytes")
