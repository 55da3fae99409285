"""Read an answer from one instance, hang up half-way, and finish it on another instance.

Usage (two ``examples/resumable_chat.py`` instances sharing one Redis; see
docs/resume.md, "Two instances and one Redis")::

    python examples/resume_client.py http://127.0.0.1:8001 http://127.0.0.1:8002

The first connection starts the answer (``POST /chat/{id}``) and leaves after a few
events, noting ``last_event_id`` (the Redis entry id of the last event it got) and
the chat's resume token (the ``x-resume-token`` response header); the second asks
the *other* instance for the rest (``GET /chat/{id}/stream`` with ``Last-Event-ID``
and the token). The events of the two connections together are the whole answer,
each exactly once -- checked against a direct decode of the same recording.
"""

from __future__ import annotations

import sys
import time
import uuid

import anyio
import httpx

import streamflow
from streamflow.demo import recording
from streamflow.reactive.sources import from_httpx


def wait_until_up(*urls: str, timeout: float = 60.0) -> None:
    """Block until every instance answers (204: nothing to resume yet)."""
    deadline = time.monotonic() + timeout
    for url in urls:
        while True:
            try:
                httpx.get(f"{url}/chat/ping/stream", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{url} did not come up") from None
                time.sleep(0.2)


async def main(first: str, second: str, leave_after: int = 5) -> None:
    chat = uuid.uuid4().hex[:8]
    got: list[streamflow.UniEvent] = []
    tokens: list[str] = []

    async def keep_token(response: httpx.Response) -> None:
        if "x-resume-token" in response.headers:
            tokens.append(response.headers["x-resume-token"])

    async with httpx.AsyncClient(timeout=30, event_hooks={"response": [keep_token]}) as http:
        start = http.build_request("POST", f"{first}/chat/{chat}")
        async with streamflow.stream(from_httpx(http, start)) as s:
            async for event in s:
                got.append(event)
                if len(got) == leave_after:
                    break  # hang up: the answer goes on being written to Redis
        last = s.last_event_id
        print(f"instance 1: {len(got)} events, then hung up after event id {last}")
        rest = http.build_request("GET", f"{second}/chat/{chat}/stream",
                                  headers={"Last-Event-ID": last or "",
                                           "x-resume-token": tokens[-1]})
        async with streamflow.stream(from_httpx(http, rest)) as s:
            more = [event async for event in s]
        print(f"instance 2: {len(more)} more events, from right after {last}")
    body = recording("anthropic", 1)
    direct = streamflow.StreamDecoder().feed(body)
    print("the whole answer, each event once:", _plain(got + more) == _plain(direct))
    assembler = streamflow.Assembler()
    for event in got + more:
        assembler.feed(event)
    print("answer:", assembler.message.text)


def _plain(events: list[streamflow.UniEvent]) -> list[dict[str, object]]:
    """The events without ``created_at`` (the producer's clock, not the recording's)."""
    return [{k: v for k, v in e.to_dict().items() if k != "created_at"} for e in events]


if __name__ == "__main__":
    one, two = sys.argv[1:3]
    wait_until_up(one, two)
    anyio.run(main, one, two)
