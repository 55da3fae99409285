"""The loopback upstream: a raw ASGI app under uvicorn (h11, keep-alive), in its own process.

``python -m bench.servers.upstream --port P`` serves

* ``POST .../chat/completions`` -- the OpenAI chat answer;
* ``POST .../messages`` -- the Anthropic Messages answer;
* ``POST /_config`` -- set the answer's :class:`~bench.servers.answer.Shape` (JSON body)
  for the requests that follow;
* ``GET /_stats`` -- ``{"sent": events written, "open": streams mid-answer, "streams": n}``.

Every delta is stamped the moment it is handed to the server (see ``answer.py``).
Deltas are written ``per_chunk`` at a time on a fixed schedule (start + i x gap), so the
offered rate does not drift with the time spent writing. No framework sits between the
app and uvicorn, so the upstream's own cost per event is as small as Python allows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .answer import Shape, _Answer, anthropic_answer, chat_answer

__all__ = ["Upstream", "main"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


class Upstream:
    """The ASGI app: answers every model request with the configured stamped answer."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.sent = self.open = self.streams = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        body = await _body(receive)
        if path == "/_config":
            self.shape = Shape(**json.loads(body))
            await _reply(send, 200, b"{}")
        elif path == "/_stats":
            await _reply(send, 200, json.dumps({"sent": self.sent, "open": self.open,
                                                "streams": self.streams}).encode())
        elif path.endswith("/chat/completions"):
            await self._stream(send, chat_answer)
        elif path.endswith("/messages"):
            await self._stream(send, anthropic_answer)
        else:
            await _reply(send, 404, b'{"error": "not found"}')

    async def _stream(self, send: Send, answer: _Answer) -> None:
        shape, clock = self.shape, time.perf_counter_ns
        self.streams += 1
        self.open += 1
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _SSE})
            await send({"type": "http.response.body", "body": answer.head, "more_body": True})
            loop = asyncio.get_running_loop()
            start, seq = loop.time(), 0
            while seq < shape.events:
                delay = start + (seq // shape.per_chunk + 1) * shape.gap - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                count = min(shape.per_chunk, shape.events - seq)
                now = clock()
                chunk = b"".join(answer.delta(now, seq + i, shape.size) for i in range(count))
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                seq += count
                self.sent += count
            await send({"type": "http.response.body", "body": answer.tail})
        finally:
            self.open -= 1


async def _body(receive: Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def _reply(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def main(argv: list[str] | None = None) -> int:
    """Serve the upstream on 127.0.0.1 until terminated."""
    import uvicorn

    from .procs import raise_nofile

    parser = argparse.ArgumentParser(prog="python -m bench.servers.upstream")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    raise_nofile()
    uvicorn.run(Upstream(Shape()), host="127.0.0.1", port=args.port, http="h11",
                loop="asyncio", lifespan="on", log_level="warning", access_log=False,
                timeout_keep_alive=600, backlog=4096)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
