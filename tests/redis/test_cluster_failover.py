"""A Redis Cluster losing a primary, or moving a slot, under a live answer (tests/realcluster.py):
six real nodes, three primaries with a replica each, on asyncio and trio.

A primary killed (SIGKILL) mid-answer is waited out -- its replica takes over, the writer
and every reader go on -- and with ``replicas=1`` nothing is lost, even entries the
replica never received (the writer had not taken them as written, so it writes them
again); without it, entries lost with the primary are :class:`StreamGapError` naming the
ids, never a silent skip; a slot moved to another node mid-answer (MOVED/ASK) costs
nothing. Each test has a cluster of its own.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.to_thread
import pytest
from realcluster import Cluster, admin, own_cluster
from realredis import same
from test_cluster import DIRECT, Collect, paced, read, whole_or_gap

import streamflow
from streamflow.reactive._redis.link import key_slot
from streamflow.reactive.sinks import RedisStreamSink
from streamflow.reactive.sources import from_redis
from streamflow.servers.web.resume import ResumableStreams, StreamGapError

__all__ = ["own_cluster"]

pytestmark = pytest.mark.anyio


async def body_of(streams: ResumableStreams, chat: str, token: str | None) -> bytes:
    """The chat's answer as the web serves it (through the app's shared read)."""
    response = await streams.response(None, chat, token=token)
    return b"".join([chunk async for chunk in response.body_iterator])  # type: ignore


async def test_a_primary_killed_mid_answer_loses_nothing_with_wait(own_cluster: Cluster
                                                                  ) -> None:
    """SIGKILL the primary serving a chat while its answer streams: the web readers (the
    shared read), a from_redis reader and one that comes after all get the whole answer."""
    streams = ResumableStreams(own_cluster.url, replicas=1, heartbeat=0.5)
    out: dict[str, Any] = {}
    async with streams.running():
        started = await streams.start("doomed", paced(0.04))
        key = started.key
        primary = own_cluster.primary_of(key)

        async def web(name: str) -> None:
            out[name] = await body_of(streams, "doomed", started.token)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(web, "web")
                tg.start_soon(read, own_cluster.url, key, out, "source")
                await anyio.sleep(0.6)  # a third of the answer is out
                killed = time.monotonic()
                await anyio.to_thread.run_sync(lambda: own_cluster.kill_primary(key))
                out["failover"] = time.monotonic() - killed
                tg.start_soon(web, "web-late")
        out["after"] = await body_of(streams, "doomed", started.token)
    assert own_cluster.primary_of(key) != primary
    for name in ("web", "web-late", "after"):
        assert same(streamflow.assemble(out[name], dialect="uni"), DIRECT), name
    whole_or_gap(out["source"], out["source.events"])
    assert isinstance(out["source"], streamflow.Message)


@pytest.mark.parametrize("replicas", [0, 1], ids=["no-wait", "wait"])
async def test_entries_the_replica_never_got(own_cluster: Cluster, replicas: int) -> None:
    """The replica stopped (SIGSTOP) and flooded (its socket full), entries written, the
    primary killed, the replica resumed and promoted without them. Without WAIT they are
    lost: a reader gets StreamGapError naming exactly them; with replicas=1 the writer had
    not taken them as written and writes them again: nothing lost."""
    key = "answer:{gap}"
    primary = own_cluster.primary_of(key)
    replica = own_cluster.replica_of(primary)
    gates = {15: anyio.Event(), 30: anyio.Event()}
    marks: dict[str, Any] = {}
    out: dict[str, Any] = {}

    def flood() -> None:
        own_cluster.node(replica).pause()
        with admin(primary) as client:  # fills the replica's socket: what follows waits
            client.set("ballast:{gap}", b"x" * (48 << 20))

    async def break_it(sink: RedisStreamSink) -> None:
        while sink.last_id is None or int(sink.last_id.rsplit("-")[1]) < 5:
            await anyio.sleep(0.02)
        await anyio.sleep(0.3)  # the first 15 chunks are in, and replicated
        marks["before"] = sink.last_id
        await anyio.to_thread.run_sync(flood)
        gates[15].set()
        await anyio.sleep(0.5)  # entries written to the primary alone
        with admin(primary) as client:
            marks["on_primary"] = int(client.xlen(key))
        marks["acknowledged"] = sink.last_id
        own_cluster.node(primary).kill()
        own_cluster.node(replica).resume()
        await anyio.to_thread.run_sync(lambda: own_cluster.wait_failover(key, primary))
        gates[30].set()
        await anyio.to_thread.run_sync(lambda: own_cluster.revive(primary))

    with anyio.fail_after(90):
        async with anyio.create_task_group() as tg:
            async with RedisStreamSink(own_cluster.url, key, replicas=replicas,
                                       replica_timeout=5, heartbeat=2) as sink:
                tg.start_soon(read, own_cluster.url, key, out, "live")
                tg.start_soon(break_it, sink)
                await streamflow.run(paced(0.0, gates), sink)
    late = Collect()
    try:
        out["late"] = await streamflow.run(from_redis(own_cluster.url, key), late)
    except streamflow.StreamflowError as error:
        out["late"] = error
    whole_or_gap(out["live"], out["live.events"])
    whole_or_gap(out["late"], late.events)
    before = marks["before"].rsplit("-")[1]
    last = marks["on_primary"] - 1  # the newest entry on the primary (the start is 0)
    assert last > int(before)  # entries reached the primary after the replica stopped
    if replicas:
        assert marks["acknowledged"] == marks["before"]  # WAIT held the writer
        assert same(out["late"], DIRECT)
    else:
        error = out["late"]
        assert isinstance(error, StreamGapError) and error.key == key
        numbers = [int(eid.rsplit("-")[1]) for eid in error.missing]
        assert numbers == list(range(numbers[0], numbers[-1] + 1))  # one run, in order
        assert int(before) < numbers[0] and last in numbers  # what the primary alone had
        assert error.missing[0] in str(error) and error.missing[-1] in str(error)


async def test_a_slot_moved_mid_answer_costs_nothing(own_cluster: Cluster) -> None:
    """Resharding: the chat's slot migrates to another primary while the answer streams
    (MOVED/ASK): the writer, the shared read and a from_redis reader follow it."""
    streams = ResumableStreams(own_cluster.url, heartbeat=0.5)
    out: dict[str, Any] = {}
    async with streams.running():
        started = await streams.start("moving", paced(0.03))
        key = started.key
        source = own_cluster.primary_of(key)
        target = next(port for port in own_cluster.primaries() if port != source)

        async def web() -> None:
            out["web"] = await body_of(streams, "moving", started.token)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(web)
                tg.start_soon(read, own_cluster.url, key, out, "source")
                await anyio.sleep(0.5)
                await anyio.to_thread.run_sync(
                    lambda: own_cluster.move_slot(key_slot(key), target))
    assert own_cluster.primary_of(key) == target
    assert same(streamflow.assemble(out["web"], dialect="uni"), DIRECT)
    assert same(out["source"], DIRECT)
