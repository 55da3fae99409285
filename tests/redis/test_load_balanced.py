"""Four app instances behind a real load balancer: 1,000 answers, each resumed mid-answer.

Debian's ``haproxy`` with the config docs/deployment.md gives (round robin, every request
to the next instance in the rotation; :class:`realredis.HAProxy`) in front of four
``uvicorn examples.resumable_chat:app`` processes on one real ``redis-server``. Each of
1,000 clients, 200 at a time, does what a browser that loses its connection does
(``bench.deploy.resumed``): ``POST /chat/{id}``, reads a random 1..33 of the answer's 34
events, hangs up, and asks again through haproxy's one address -- so most land on
another instance -- with ``Last-Event-ID`` and the chat's resume token, then reads the
rest. Every answer is checked against what Redis holds for it: the events after the
reconnect are exactly the entries after the last id (none twice, none missing), the
events before it came back as ``event: replay`` frames under the resume point's id, the
whole answer is the recording's, with one terminal event, last. The figures of the guide come
from ``python -m bench.deploy``, run here at a tiny size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import anyio
import pytest
from parts import program
from realredis import DEMO_TURN, ROOT, HAProxy, Instance, RedisServer

import streamflow
from bench.deploy import UNI_EVENTS, Resumed, drive
from streamflow.core.events import event_from_dict

STREAMS = int(os.environ.get("STREAMFLOW_BALANCED_STREAMS", "1000"))
AT_ONCE = 200  # clients at a time: what this 2-core machine runs beside the 4 instances
ENV = {"STREAMFLOW_DELAY": "0.05",  # an answer of 39 SSE events takes about 2 s
       "STREAMFLOW_HEARTBEAT": "5",  # a loaded CI box: readers wait 15 s for the producer
       "STREAMFLOW_MAX_LIVE_PER_CLIENT": "100000"}  # every client here is 127.0.0.1


@pytest.fixture()
def balanced(own_redis: RedisServer, tmp_path: Path) -> Iterator[tuple[HAProxy, list[Instance]]]:
    """haproxy in front of four instances on this test's Redis (logs in ``tmp_path``)."""
    program("haproxy")  # skips (fails in CI) before anything starts
    instances = [Instance(own_redis.url, tmp_path / f"app{n}.log", **ENV) for n in range(4)]
    proxy = HAProxy([i.port for i in instances], tmp_path / "haproxy")
    try:
        for instance in instances:
            instance.wait_ready()
        proxy.start()
        yield proxy, instances
    finally:
        proxy.stop()
        for instance in instances:
            instance.stop()


def plain(events: list[streamflow.UniEvent]) -> list[dict[str, Any]]:
    """The events without ``created_at`` (the producer's clock)."""
    return [{k: v for k, v in e.to_dict().items() if k != "created_at"} for e in events]


def stored(client: Any, chat: str) -> list[tuple[str, str]]:
    """The ``(id, uni JSON)`` of the event and end entries of the chat's answer in Redis."""
    key = client.get(f"streamflow:chat:{chat}")
    return [(entry_id, fields["d"]) for entry_id, fields in client.xrange(key)
            if fields["k"] in ("event", "end")]


@pytest.mark.slow
def test_1000_answers_through_haproxy_each_resumed_through_it_mid_answer(
        balanced: tuple[HAProxy, list[Instance]], own_redis: RedisServer) -> None:
    import redis

    proxy, _ = balanced
    options = {"use_uvloop": True} if find_spec("uvloop") else {}
    started = time.monotonic()
    results: list[Resumed] = anyio.run(lambda: drive(proxy.url, STREAMS, AT_ONCE),
                                       backend_options=options)
    elapsed = time.monotonic() - started

    recording = plain(streamflow.StreamDecoder().feed(DEMO_TURN))
    assert len(recording) == UNI_EVENTS and len(results) == STREAMS
    with redis.Redis(port=own_redis.port, decode_responses=True) as client:
        memory = client.info("memory")["used_memory"]
        for got in results:
            assert got.error is None, got.error
            entries = stored(client, got.chat)
            assert got.first == entries[:got.cut], got.chat  # the answer's start, in order
            assert got.replayed == [got.last_id] * got.cut, got.chat  # under the resume point
            assert got.first + got.rest == entries, got.chat  # the rest, exactly after it
            events = [event_from_dict(json.loads(data)) for _, data in entries]
            assert plain(events) == recording, got.chat  # the whole answer
            assert [e.event_type for e in events].count("stop") == 1  # one terminal event,
            assert events[-1].event_type == "stop"  # the last

    # round robin: the POST and the resume of a client are not consecutive requests (199
    # other clients ask meanwhile), so the resume lands on any of the four: another in 3/4
    moved = sum(r.moved for r in results)
    assert {r.instances[0] for r in results} == {r.instances[1] for r in results} \
        == {"app1", "app2", "app3", "app4"}
    assert moved >= 0.6 * STREAMS, moved
    delays = sorted(r.first_frame - r.reconnected for r in results if r.first_frame is not None)
    print(f"\n{STREAMS} answers, {AT_ONCE} at a time, in {elapsed:.1f} s; "
          f"{moved} resumed on another instance; reconnect -> first event back "
          f"p50 {delays[len(delays) // 2] * 1e3:.1f} ms, "
          f"p99 {delays[int(len(delays) * 0.99)] * 1e3:.1f} ms; "
          f"Redis holds {memory / 1e6:.1f} MB ({memory / STREAMS / 1e3:.1f} KB per answer)")


@pytest.mark.slow
def test_the_deployment_bench_runs_quick(tmp_path: Path) -> None:
    """``python -m bench.deploy`` (docs/deployment.md's figures), at a tiny size: it starts
    its deployment, prints a row for it and stops it."""
    program("haproxy")
    program("redis-server")
    rows = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, "-m", "bench.deploy", "--setup", "haproxy",
                           "--concurrency", "4", "--streams", "8", "--delay", "0.01",
                           "--json", str(rows)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| 4 | 8/8 |" in done.stdout, done.stdout  # every answer whole
    row, = json.loads(rows.read_text())
    assert row["failed"] == 0 and row["events"] == 8 * UNI_EVENTS
    assert set(row["cpu_s_by_role"]) == {"app", "redis", "haproxy"}
