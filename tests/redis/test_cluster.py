"""Resumable streams on a real Redis Cluster: six ``redis-server --cluster-enabled`` nodes,
three primaries and three replicas (tests/realcluster.py), on asyncio and trio.

What must hold: a cluster is taken wherever a Redis is (a ``redis+cluster://`` URL or a
redis-py cluster client); every key of one chat is in one slot and no node ever counts a
``CROSSSLOT``; the shared read reads each slot group on its node; a primary killed (SIGKILL)
mid-answer is waited out -- its replica takes over, the writer and the readers go on --
and with ``replicas=1`` nothing is lost, even entries the replica never received (the
writer writes them again); without it a lost entry is :class:`StreamGapError` naming the
ids, never a silent skip; a slot moved to another node mid-answer costs nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import pytest
from realcluster import Cluster, admin, cluster_url, own_cluster, redis_cluster
from realdata import DATA
from realredis import DEMO_TURN, Collect, same, serving

import streamflow
from streamflow.core.events import UniEvent
from streamflow.reactive._redis.link import RedisLink, cluster_nodes, is_cluster, key_slot
from streamflow.reactive._redis.streams import read_batches
from streamflow.reactive._redis.tailer import Tailer
from streamflow.reactive.sinks import RedisStreamSink
from streamflow.reactive.sources import from_async_iterable, from_bytes, from_redis
from streamflow.servers.web._resume_access import ChatKeys
from streamflow.servers.web.resume import (
    ResumableStreams,
    StreamGapError,
    message_key,
    stop_key,
)

__all__ = ["cluster_url", "own_cluster", "redis_cluster"]

pytestmark = pytest.mark.anyio

BODY = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()
DIRECT = streamflow.assemble(BODY)
EVENTS = streamflow.StreamDecoder().feed(BODY)
CHUNKS = [BODY[i:i + 100] for i in range(0, len(BODY), 100)]


def plain(events: list[UniEvent]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_dict().items() if k != "created_at"} for e in events]


def paced(delay: float, gates: dict[int, anyio.Event] | None = None) -> Any:
    """The recording in 100-byte chunks, ``delay`` apart; before chunk ``n`` in ``gates``,
    wait for its event."""

    async def body() -> AsyncIterator[bytes]:
        for n, chunk in enumerate(CHUNKS):
            if gates and n in gates:
                await gates[n].wait()
            await anyio.sleep(delay)
            yield chunk

    return from_async_iterable(body)


async def read(url: str, key: str, into: dict[str, Any], name: str) -> None:
    """One from_redis reader: its message (or typed error) and the events it delivered."""
    got = Collect()
    try:
        into[name] = await streamflow.run(from_redis(url, key), got)
    except streamflow.StreamflowError as error:
        into[name] = error
    into[f"{name}.events"] = got.events


def whole_or_gap(outcome: Any, events: list[UniEvent]) -> None:
    """Never a silent skip: the whole answer, or a StreamGapError after a prefix of it."""
    assert plain(events) == plain(EVENTS[:len(events)])  # what was delivered has no hole
    if isinstance(outcome, streamflow.Message):
        assert same(outcome, DIRECT) and len(events) == len(EVENTS)
    else:
        assert isinstance(outcome, StreamGapError), outcome
        assert outcome.missing and len(events) < len(EVENTS)


# -- the API ------------------------------------------------------------------------
def test_a_cluster_url_names_its_nodes() -> None:
    assert is_cluster("redis+cluster://h:1") and is_cluster("rediss+cluster://h:1")
    assert not is_cluster("redis://h:1/0") and not is_cluster("unix:///tmp/r.sock")
    first, nodes = cluster_nodes("rediss+cluster://u:p%40ss@a.example:7000, b:7001,[::1]:7002"
                                 "/0?ssl_cert_reqs=none")
    assert first == "rediss://u:p%40ss@a.example:7000/0?ssl_cert_reqs=none"
    assert nodes == [("a.example", 7000), ("b", 7001), ("::1", 7002)]
    with pytest.raises(ValueError, match="host:port"):
        cluster_nodes("redis+cluster://a:7000,b")
    with pytest.raises(ValueError, match=r"\{ or \}"):
        ResumableStreams("redis+cluster://a:7000", prefix="app{x}:")
    ResumableStreams("redis://a:7000", prefix="app{x}:")  # one Redis: any prefix, as before


async def test_a_cluster_client_is_taken_and_left_open(cluster_url: str,
                                                       anyio_backend: str) -> None:
    """asyncio: redis.asyncio.RedisCluster; trio: redis.cluster.RedisCluster (in threads)."""
    import redis.asyncio
    import redis.cluster

    first, _ = cluster_nodes(cluster_url)
    if anyio_backend == "trio":
        with pytest.raises(TypeError, match="asyncio only"):
            RedisLink(redis.asyncio.RedisCluster.from_url(first, decode_responses=True))
        client: Any = await anyio.to_thread.run_sync(
            lambda: redis.cluster.RedisCluster.from_url(first, decode_responses=True))
    else:
        client = redis.asyncio.RedisCluster.from_url(first, decode_responses=True)
    raw = redis.asyncio.RedisCluster.from_url(first) if anyio_backend == "asyncio" else None
    if raw is not None:
        with pytest.raises(ValueError, match="decode_responses=True"):
            RedisLink(raw)
        await raw.aclose()
    try:
        async with RedisStreamSink(client, "answer:{c1}", replicas=1) as sink:
            produced = await streamflow.run(from_bytes(BODY, chunk_size=97), sink)
        assert sink.unreplicated == 0
        assert same(await streamflow.run(from_redis(client, "answer:{c1}")), produced)
        link = RedisLink(client)
        await link.aclose()  # not ours: still open
        assert int(await link.call("xlen", "answer:{c1}")) > 2
    finally:
        if anyio_backend == "trio":
            await anyio.to_thread.run_sync(client.close)
        else:
            await client.aclose()


# -- round trips --------------------------------------------------------------------
@pytest.mark.parametrize("replicas", [0, 1])
async def test_sink_and_source_round_trip(cluster_url: str, replicas: int) -> None:
    keys = [f"answer:{n}" for n in range(6)]  # no hash tags: spread over the nodes
    async with anyio.create_task_group() as tg:
        for key in keys:
            tg.start_soon(produce_whole, cluster_url, key, replicas)
    for key in keys:
        assert same(await streamflow.run(from_redis(cluster_url, key)), DIRECT)
    link = RedisLink(cluster_url)
    try:
        ids = [eid for eid, fields in await link.call("xrange", keys[0], "-", "+")
               if fields["k"] == "event"]
    finally:
        await link.aclose()
    cut = ids[len(ids) // 2]
    rest = Collect()
    message = await streamflow.run(from_redis(cluster_url, keys[0], last_event_id=cut), rest)
    assert same(message, DIRECT) and 0 < len(rest.events) < len(EVENTS)


async def produce_whole(url: str, key: str, replicas: int = 0) -> None:
    async with RedisStreamSink(url, key, replicas=replicas) as sink:
        await streamflow.run(from_bytes(BODY, chunk_size=97), sink)
    assert sink.unreplicated == 0


async def test_resumable_streams_round_trip(cluster_url: str) -> None:
    streams = ResumableStreams(cluster_url, replicas=1)
    async with serving(streams) as http:
        started = await http.post("/chat/c1")
        token = started.headers["x-resume-token"]
        assert started.status_code == 200
        answer = streamflow.assemble(DEMO_TURN)  # what the test app answers
        assert same(streamflow.assemble(started.content, dialect="uni"), answer)
        ids = [line[4:] for line in started.text.splitlines() if line.startswith("id: ")]
        resumed = await http.get("/chat/c1/stream", headers={
            "x-resume-token": token, "last-event-id": ids[len(ids) // 2]})
        assert resumed.status_code == 200
        assert resumed.content.count(b"event: replay") > 0
        assert same(streamflow.assemble(resumed.content, dialect="uni"), answer)
        ui = await http.get("/chat/c1/stream?to=vercel-ui", headers={"x-resume-token": token})
        assert ui.status_code == 200 and b'"type":"finish"' in ui.content
        assert (await http.get("/chat/c1/stream")).status_code == 403  # no token
        assert (await http.post("/chat/c1", headers={"x-resume-token": token})).status_code \
            == 200  # a new answer of the chat, with its token
        assert (await http.get("/chat/none/stream")).status_code == 204


async def test_every_key_of_a_chat_is_in_one_slot(redis_cluster: Cluster, cluster_url: str
                                                  ) -> None:
    """Every key ResumableStreams writes, read back from the nodes: one slot per chat, the
    chats over several nodes, and not one CROSSSLOT counted by any node."""
    for port in redis_cluster.primaries():
        with admin(port) as client:
            client.config_resetstat()
    streams = ResumableStreams(cluster_url)
    chats = [f"chat-{n}" for n in range(12)]
    async with streams.running():
        for chat in chats:
            started = await streams.start(chat, paced(0.0), message_id=f"m-{chat}")
            assert await streams.stop(chat)  # the stop key too
            body = (await streams.response(None, chat, token=started.token)).body_iterator
            async for _chunk in body:  # type: ignore[attr-defined]
                pass
    found: dict[str, set[int]] = {}
    nodes: dict[str, set[int]] = {}
    for port in redis_cluster.primaries():
        with admin(port) as client:
            for key in client.scan_iter("streamflow:*"):
                chat = key[key.index("{") + 1:key.index("}")]
                found.setdefault(chat, set()).add(key_slot(key))
                nodes.setdefault(chat, set()).add(port)
                kinds = key.split(":")[1]
                assert kinds in ("chat", "token", "stream", "stop"), key
            errors = client.info("errorstats")
            assert not any("CROSSSLOT" in name for name in errors), errors
    assert set(found) == set(chats)
    assert all(len(slots) == 1 for slots in found.values()), found
    assert all(len(ports) == 1 for ports in nodes.values())
    assert len({port for ports in nodes.values() for port in ports}) > 1  # spread out
    keys = ChatKeys("streamflow:", cluster=True)  # every key the code builds
    stream = keys.stream("c", "0123")
    built = [keys.pointer("c"), keys.token("c"), stream, message_key(stream),
             stop_key("streamflow:", stream)]
    assert {key_slot(key) for key in built} == {key_slot("{c}")}


async def test_the_shared_read_reads_each_slot_group_on_its_node(
        redis_cluster: Cluster, cluster_url: str) -> None:
    """Keys of several slots, two of them on one node (one XREAD could not name both):
    every reader of the one Tailer gets every entry, each once."""
    keys = [f"t{{{n}}}" for n in range(8)]
    by_node: dict[int, set[int]] = {}
    for key in keys:
        by_node.setdefault(redis_cluster.primary_of(key), set()).add(key_slot(key))
    assert any(len(slots) > 1 for slots in by_node.values())
    link = RedisLink(cluster_url)
    tailer = Tailer(link)
    got: dict[str, list[str]] = {}
    groups: list[int] = []

    async def reader(key: str, delay: float) -> None:
        await anyio.sleep(delay)
        got[key] = [e.id async for batch in read_batches(link, key, tailer=tailer)
                    for e in batch]
        groups.append(len(tailer.groups))

    async def write(key: str, delay: float, readers: Any) -> None:
        async with RedisStreamSink(cluster_url, key, link=link) as sink:
            readers.start_soon(reader, key, delay)  # the start entry is there
            await streamflow.run(paced(0.005), sink)

    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(tailer.run)
                async with anyio.create_task_group() as work:
                    for n, key in enumerate(keys):
                        work.start_soon(write, key, 0.02 * n, work)
                tg.cancel_scope.cancel()
        for key in keys:
            every = [eid for eid, _ in await link.call("xrange", key, "-", "+")]
            assert got[key] == every
    finally:
        await link.aclose()
    assert max(groups) > 1  # several slot groups were read at once
    assert not tailer.readers and not tailer.cursors and not tailer.groups


# -- gaps and WAIT on one Redis -----------------------------------------------------
async def test_a_lost_entry_is_a_typed_gap_naming_its_ids(redis_url: str) -> None:
    """Entries gone from the middle (as a failover loses them): a reader on its own XREAD
    and one on the shared read end with StreamGapError naming them, after the events
    before them (over the uni wire: a TransportError with the same message); never a
    silent skip."""
    async with RedisStreamSink(redis_url, "holed") as sink:
        await streamflow.run(from_bytes(BODY, chunk_size=97), sink)
    link = RedisLink(redis_url)
    try:
        ids = [eid for eid, _ in await link.call("xrange", "holed", "-", "+")]
        lost = tuple(ids[5:8])
        await link.call("xdel", "holed", *lost)
        got = Collect()
        with pytest.raises(StreamGapError) as info:
            await streamflow.run(from_redis(redis_url, "holed"), got)
        assert info.value.missing == lost and info.value.after == ids[4]
        assert info.value.key == "holed" and isinstance(info.value, streamflow.TransportError)
        assert f"{lost[0]} to {lost[-1]} (3)" in str(info.value)
        assert plain(got.events) == plain(EVENTS[:4])  # events 1-4: entries 1-4
        tailer = Tailer(link)
        async with anyio.create_task_group() as tg:
            tg.start_soon(tailer.run)
            with pytest.raises(StreamGapError) as tailed:
                async for _batch in read_batches(link, "holed", tailer=tailer):
                    pass
            tg.cancel_scope.cancel()
        assert tailed.value.missing == lost
    finally:
        await link.aclose()
    from streamflow.wire.dialects.uni.decode import encode_sse

    with pytest.raises(streamflow.TransportError, match=lost[0]):  # over the uni wire
        streamflow.assemble(encode_sse(info.value), dialect="uni")


async def test_wait_without_replicas_counts_the_shortfall_and_goes_on(redis_url: str) -> None:
    """One Redis has no replica: each batch waits replica_timeout, the stream is whole,
    and the batches are counted in unreplicated."""
    async with RedisStreamSink(redis_url, "lonely", replicas=1, replica_timeout=0.02) as sink:
        produced = await streamflow.run(from_bytes(BODY), sink)
    assert sink.unreplicated >= 2  # the start entry's batch, the rest, the end
    assert same(await streamflow.run(from_redis(redis_url, "lonely")), produced)
    with pytest.raises(ValueError, match="replicas"):
        RedisStreamSink(redis_url, "k", replicas=-1)
