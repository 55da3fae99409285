"""``python -m bench.gateway``: the gateway's added latency per event over loopback.

A loopback upstream (h11 on anyio, in this process) streams an Anthropic answer of
``--events`` text deltas, one per HTTP chunk, ``--gap`` seconds apart; each delta's
text is the ``perf_counter_ns()`` at which it was written to the socket. A client
in this process reads it straight from the upstream, and through the gateway
(``streamflow gateway`` in its own process, under uvicorn, re-encoding for each
client dialect). Each event's latency is its arrival time minus its stamp; the
gateway's added latency is the through-gateway percentile minus the direct one.
Printed: p50 / p99 of the latency direct and through the gateway, and the added p50 / p99.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import anyio
import h11
import httpx
from anyio.abc import SocketAttribute, SocketStream

__all__ = ["StampingUpstream", "main", "upstream_chunks"]

BODIES = {
    "/v1/messages": {"model": "m", "max_tokens": 64, "stream": True,
                     "messages": [{"role": "user", "content": "hi"}]},
    "/v1/chat/completions": {"model": "m", "stream": True,
                             "messages": [{"role": "user", "content": "hi"}]},
    "/v1/responses": {"model": "m", "stream": True, "input": "hi"},
}


def _sse(kind: str, data: dict[str, object]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


HEAD = _sse("message_start", {"type": "message_start", "message": {
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "bench",
    "content": [], "stop_reason": None, "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1}}}) + _sse(
    "content_block_start", {"type": "content_block_start", "index": 0,
                            "content_block": {"type": "text", "text": ""}})
TAIL = _sse("content_block_stop", {"type": "content_block_stop", "index": 0}) + _sse(
    "message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                      "usage": {"output_tokens": 1}}) + _sse("message_stop",
                                                             {"type": "message_stop"})
STAMPS = {path: re.compile(rb'"' + key + rb'": ?"(\d{6,}) ')
          for path, key in (("/v1/messages", b"text"), ("/v1/chat/completions", b"content"),
                            ("/v1/responses", b"delta"))}
"""Where each dialect's text delta carries the stamp (done/summary events are not matched)."""


def upstream_chunks(events: int) -> list[bytes]:
    """The answer's chunks with placeholder stamps (the server stamps them as it sends)."""
    return [HEAD, *[_delta(0) for _ in range(events)], TAIL]


def _delta(stamp: int) -> bytes:
    return _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": f"{stamp} "}})


class StampingUpstream:
    """One-route HTTP/1.1 server: every request gets the answer, each delta stamped when sent."""

    def __init__(self, events: int, gap: float) -> None:
        self.events, self.gap, self.port = events, gap, 0

    async def serve(self, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(SocketAttribute.local_port)
        task_status.started()
        await listener.serve(self._connection)

    async def _connection(self, stream: SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await stream.receive(65536))
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    return
            await stream.send(conn.send(h11.Response(status_code=200, headers=[
                ("content-type", "text/event-stream"), ("transfer-encoding", "chunked")])))
            await stream.send(conn.send(h11.Data(data=HEAD)))
            for _ in range(self.events):
                await anyio.sleep(self.gap)
                await stream.send(conn.send(h11.Data(data=_delta(time.perf_counter_ns()))))
            await stream.send(conn.send(h11.Data(data=TAIL)))
            await stream.send(conn.send(h11.EndOfMessage()))


async def _latencies(url: str, path: str) -> list[float]:
    """Microseconds from each delta's stamp to its arrival at the client."""
    out: list[float] = []
    async with httpx.AsyncClient(timeout=None) as client, \
            client.stream("POST", url + path, json=BODIES[path]) as response:
        buffer = b""
        async for chunk in response.aiter_raw():
            now = time.perf_counter_ns()
            buffer += chunk
            whole, cut, buffer = buffer.rpartition(b"\n\n")
            out += [(now - int(m)) / 1000 for m in STAMPS[path].findall(whole + cut)]
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _run(events: int, gap: float, reps: int) -> dict[str, dict[str, float]]:
    upstream = StampingUpstream(events, gap)
    port = _free_port()
    results: dict[str, dict[str, float]] = {}
    async with anyio.create_task_group() as tg:
        await tg.start(upstream.serve)
        upstream_url = f"http://127.0.0.1:{upstream.port}"
        process = await anyio.open_process(
            [sys.executable, "-m", "streamflow", "gateway", "--listen", f"127.0.0.1:{port}",
             "--upstream", upstream_url, "--upstream-dialect", "anthropic",
             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        gateway = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient() as probe:
                with anyio.fail_after(30):
                    while True:
                        try:
                            await probe.post(gateway + "/v1/messages", content=b"{}")
                            break
                        except httpx.ConnectError:
                            await anyio.sleep(0.1)
            for path in BODIES:  # warm-up: imports and first calls in the gateway
                await _latencies(gateway, path)
            direct: list[float] = []
            through: dict[str, list[float]] = {path: [] for path in BODIES}
            for _ in range(reps):  # interleaved, so load on the machine hits every path
                direct += await _latencies(upstream_url, "/v1/messages")
                for path in BODIES:
                    through[path] += await _latencies(gateway, path)
            base = {"p50_us": _percentile(direct, 0.5), "p99_us": _percentile(direct, 0.99)}
            results["direct"] = {"events": len(direct), **base}
            for path, values in through.items():
                p50, p99 = _percentile(values, 0.5), _percentile(values, 0.99)
                results[path] = {"events": len(values), "p50_us": p50, "p99_us": p99,
                                 "added_p50_us": p50 - base["p50_us"],
                                 "added_p99_us": p99 - base["p99_us"]}
        finally:
            process.terminate()
            await process.wait()
            tg.cancel_scope.cancel()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurement and print one line per client dialect."""
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__)
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--gap", type=float, default=0.005, help="seconds between events")
    parser.add_argument("--reps", type=int, default=3, help="runs of each path, interleaved")
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    args = parser.parse_args(argv)
    results = anyio.run(_run, args.events, args.gap, args.reps)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"gateway added latency per event (anthropic upstream, {args.reps} x {args.events} "
          f"events, {args.gap * 1000:g} ms apart, loopback)")
    for path, r in results.items():
        added = "" if path == "direct" else (f"   added p50 {r['added_p50_us']:7.0f} us   "
                                             f"p99 {r['added_p99_us']:7.0f} us")
        print(f"  {path:22} p50 {r['p50_us']:7.0f} us   p99 {r['p99_us']:7.0f} us{added}"
              f"   ({r['events']:.0f} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
