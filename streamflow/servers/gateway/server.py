"""The uvicorn server ``streamflow gateway`` starts, with the timeouts and caps of a network edge.

uvicorn covers, as configured by :func:`server_config`: the keep-alive timeout
between requests (``timeout_keep_alive``), a cap on concurrent connections and
tasks (``limit_concurrency``, answered 503 over it) and the size of a request's
head (``h11_max_incomplete_event_size``: request line plus headers, refused with
400 over it). uvicorn has no timeout on reading a request's headers, so a client
sending them a byte at a time holds its connection forever (slowloris):
:class:`HeaderTimeoutH11Protocol` closes a connection whose request head is not
complete within ``header_timeout`` seconds of the connection opening or of the
previous response ending. Under httptools (the default when it is installed:
less CPU per event than h11), which uvicorn leaves uncapped, the private
``gateway._httptools`` protocol enforces the same head size and time. The
body's read timeout is the app's
(:attr:`~streamflow.servers.gateway.limits.GatewayLimits.body_timeout`, a 408).

An app mounted in your own server gets the app-level limits only; set the
equivalent server options there (see ``docs/SECURITY.md``).
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import DEFAULT_SERVER_LIMITS, ServerLimits, _HeadTimer

__all__ = ["DEFAULT_SERVER_LIMITS", "HTTP_PARSERS", "HeaderTimeoutH11Protocol", "ServerLimits",
           "server_config"]


class HeaderTimeoutH11Protocol(_HeadTimer, H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head is too slow."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)


HTTP_PARSERS = ("auto", "h11", "httptools")
"""The ``http`` values :func:`server_config` takes (``streamflow gateway --http``)."""


def server_config(limits: ServerLimits = DEFAULT_SERVER_LIMITS,
                  http: str = "auto") -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run``/``uvicorn.Config`` enforcing ``limits``.

    ``http`` is uvicorn's HTTP implementation, each with the limits above: ``"h11"``,
    ``"httptools"`` (less CPU per event than h11; needs httptools, in the
    ``gateway`` extra) or ``"auto"``, httptools when it is installed.
    """
    if http == "auto":
        http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    base: type
    if http == "httptools":
        from ._httptools import HeadLimitedHttpToolsProtocol
        base = HeadLimitedHttpToolsProtocol
    elif http == "h11":
        base = HeaderTimeoutH11Protocol
    else:
        raise ValueError(f"http is one of {', '.join(HTTP_PARSERS)}, not {http!r}")
    protocol = type(f"Gateway{base.__name__}", (base,),
                    {"header_timeout": limits.header_timeout,
                     "max_header_bytes": limits.max_header_bytes})
    return {"http": protocol, "timeout_keep_alive": limits.keep_alive_timeout,
            "limit_concurrency": limits.max_connections,
            "h11_max_incomplete_event_size": limits.max_header_bytes}
