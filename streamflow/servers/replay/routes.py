"""What the replay server answers (:class:`Route`) and what it saw (:class:`Hit`).

A route is plain data, so a demo or a fault injector builds one from a list of
chunks (``chunks`` are written one per HTTP chunk, in order, ``delays[i]``
seconds before chunk ``i``)::

    Route(chunks=[b"event: ping\\n", b"data: {}\\n\\n"], delays=0.01)
    Route.from_body(body)                          # split into odd-sized pieces
    Route.error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                 "message": "slow down"}},
                headers={"retry-after": "2"})
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["ODD_SIZES", "Hit", "Route", "split_odd"]

ODD_SIZES: tuple[int, ...] = (7, 1, 13, 3, 29, 5, 61, 2, 17)


def split_odd(body: bytes, sizes: Sequence[int] = ODD_SIZES) -> list[bytes]:
    """Cut ``body`` into pieces of the given sizes, cycling (splits lines, JSON and UTF-8)."""
    out: list[bytes] = []
    pos, i = 0, 0
    while pos < len(body):
        step = max(1, sizes[i % len(sizes)])
        out.append(body[pos:pos + step])
        pos += step
        i += 1
    return out


@dataclass
class Route:
    """One HTTP response: status, headers, and a body sent as chunked transfer encoding.

    * ``chunks`` -- the body pieces, each written as one HTTP/1.1 chunk (empty ones skipped).
    * ``delays`` -- seconds to wait before each chunk: one number for all, or a list
      (``delays[i]`` before chunk ``i``; missing entries are 0).
    * ``abort`` -- after the last chunk, drop the connection without ending the body
      (the client sees a mid-body disconnect).
    """

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    delays: float | Sequence[float] = 0.0
    abort: bool = False

    @classmethod
    def from_body(cls, body: bytes, *, sizes: Sequence[int] = ODD_SIZES, **kwargs: Any) -> Route:
        """A route serving ``body`` in odd-sized chunks (see :func:`split_odd`)."""
        return cls(chunks=split_odd(body, sizes), **kwargs)

    @classmethod
    def error(cls, status: int, payload: Any, *, headers: dict[str, str] | None = None) -> Route:
        """A non-2xx answer: a JSON body from ``payload`` (bytes/str are sent as they are)."""
        if isinstance(payload, bytes):
            body, ctype = payload, "text/plain"
        elif isinstance(payload, str):
            body, ctype = payload.encode(), "text/plain"
        else:
            body, ctype = json.dumps(payload).encode(), "application/json"
        return cls(status=status, chunks=[body], headers=dict(headers or {}), content_type=ctype)

    def delay(self, index: int) -> float:
        """Seconds to wait before chunk ``index``."""
        if isinstance(self.delays, (int, float)):
            return float(self.delays)
        return float(self.delays[index]) if index < len(self.delays) else 0.0


@dataclass
class Hit:
    """One request the server answered, and what it observed while answering.

    ``disconnected`` is True when the client went away before the body's end;
    ``completed`` when the whole body (and its terminating chunk) was written.
    ``chunks_sent`` counts the body chunks written before either.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""
    status: int = 0
    chunks_sent: int = 0
    completed: bool = False
    disconnected: bool = False
    done: anyio.Event = field(default_factory=anyio.Event, repr=False)

    def json(self) -> Any:
        """The request body parsed as JSON."""
        return json.loads(self.body)
