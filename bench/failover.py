"""``python -m bench.failover``: what a failover chain costs when nothing fails.

The mixed workloads of ``python -m bench`` (Anthropic, 9,011 events; OpenAI chat, 9,005
events; the same seeded 1-400 byte chunks) are read under ``anyio.run``, each body
served through ``httpx.MockTransport`` (the transport a real request pays), by:

* *run()* -- ``streamflow.run(from_httpx(client, request), sink)``: the pump task, THE
  chunk reader, THE decode loop, the fan-out: the plain run;
* *run() through a Failover* -- the same request as the one endpoint of a chain
  (``Failover([...]).source(request)``, sent with ``http_sender(client)``): the relay
  reads it with the same reader and decoder, the continuation's bookkeeping on every
  event, the delivery record on the stop;
* *the same, three endpoints* -- the chain as a user configures it for failover (two
  fallbacks, never asked: nothing fails), so a continuation could happen: a plain sink
  gets the stream through a Holdback.

Each path checks it assembles the expected message (text, thinking, tool calls).
Times are CPU seconds of this process (interleaved repetitions, the minimum of
``--reps``); the verdict is the chain's cost over the plain run, to hold under 5 %.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx

import streamflow
from streamflow import Endpoint, Failover, Message
from streamflow.app.failover import http_sender
from streamflow.core.requests import ChatRequest
from streamflow.reactive.sources import from_httpx
from streamflow.wire.dialects.request_base import HTTPRequest

from .measure import interleaved_times
from .paths import DoneSink
from .workloads import Workload, anthropic_mixed, chunked, openai_mixed

TARGET = 0.05
"""The most a chain may cost over the plain run when nothing fails (the issue's 5 %)."""
URL = "http://bench.invalid/v1/messages"


def client_of(chunks: list[bytes]) -> httpx.AsyncClient:
    """An ``AsyncClient`` answering every request with ``chunks`` (``MockTransport``)."""
    class Chunks(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              stream=Chunks(), request=request)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def plain(chunks: list[bytes], dialect: str) -> Message:
    """``run()`` over ``from_httpx``."""
    async def go() -> Message:
        async with client_of(chunks) as client:
            source = from_httpx(client, lambda: client.build_request("POST", URL))
            return await streamflow.run(source, DoneSink(), dialect=dialect)
    return anyio.run(go)


def chained(chunks: list[bytes], dialect: str, endpoints: int = 1) -> Message:
    """The same request as the first endpoint of a chain of ``endpoints``."""
    request = HTTPRequest(URL, {}, {})

    async def go() -> Message:
        async with client_of(chunks) as client:
            chain = Failover([Endpoint(dialect, lambda chat: request, name=f"e{i}")
                              for i in range(endpoints)], send=http_sender(client))
            return await streamflow.run(chain.source(ChatRequest()), DoneSink())
    return anyio.run(go)


def check(message: Message, workload: Workload) -> None:
    want = workload.expected
    if (message.text, message.thinking) != (want.text, want.thinking) or \
            [(c.tool_call_id, c.name, c.arguments) for c in message.tool_calls] != \
            want.tool_calls:
        raise AssertionError(f"{workload.name}: a path read another message")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.failover", description=__doc__)
    parser.add_argument("--reps", type=int, default=7, help="repetitions per path (min taken)")
    parser.add_argument("--quick", action="store_true", help="tiny workloads, one repetition")
    args = parser.parse_args(argv)
    workloads = ([anthropic_mixed(5, 40, 120, 30, 900), openai_mixed(5, 40, 120, 15, 450)]
                 if args.quick else [anthropic_mixed(), openai_mixed()])
    reps = 1 if args.quick else args.reps
    worst = 0.0
    print(f"{'workload':<22}{'path':<34}{'CPU s':>9}{'vs run()':>10}")
    for workload in workloads:
        chunks = chunked(workload.body, seed=11)
        paths: dict[str, Callable[[], Any]] = {
            "run()": lambda c=chunks, d=workload.dialect: plain(c, d),
            "run() through a Failover": lambda c=chunks, d=workload.dialect: chained(c, d),
            "the same, three endpoints": lambda c=chunks, d=workload.dialect: chained(c, d, 3),
        }
        times, results = interleaved_times(paths, dict.fromkeys(paths, reps), pick=min)
        for message in results.values():
            check(message, workload)
        base = times["run()"]
        for name, seconds in times.items():
            ratio = seconds / base - 1
            if name != "run()":
                worst = max(worst, ratio)
            print(f"{workload.name:<22}{name:<34}{seconds:>9.4f}{ratio:>+10.1%}")
    verdict = "holds" if worst <= TARGET else "MISSED"
    print(f"\nthe chain's cost when nothing fails: at most {worst:+.1%} "
          f"(target {TARGET:.0%}: {verdict})")
    return 0 if args.quick or worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
