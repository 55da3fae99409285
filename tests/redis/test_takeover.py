"""An answer that outlives its producer: the instance producing it is killed (SIGKILL) or
stopped (SIGTERM) in the middle of the answer; another instance takes its lease and
continues the answer from what is in Redis; every reader -- one that was tailing, one that
reconnects -- reads one answer, nothing lost, nothing twice.

Two app processes (``tests/redis/chain_app.py`` under uvicorn) share one real Redis; the
model is a loopback server (:mod:`failover_model`) that continues what it is asked to,
slowly, so the kill lands mid-answer.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from failover_model import CALL, PATHS, TEXT, THINKING, Model
from realcluster import cluster_url, redis_cluster
from realredis import EventSourceClient, Instance

import streamflow
from streamflow.servers.replay import ReplayServer

pytestmark = pytest.mark.anyio
__all__ = ["cluster_url", "redis_cluster"]  # the fixtures a test here asks for
HEARTBEAT = "0.5"


@pytest.fixture
def model() -> Model:
    return Model("openai-chat", delay=0.04)


@pytest.fixture
def apps(redis_url: str, tmp_path: Path) -> Iterator[Any]:
    """Start instances of tests/redis/chain_app.py asking ``model_url``."""
    started: list[Instance] = []

    def start(model_url: str) -> Instance:
        app = Instance(redis_url, tmp_path / f"app{len(started)}.log", app="chain_app:app",
                       args=("--app-dir", "tests/redis", "--log-level", "info"),
                       MODEL_URL=model_url, STREAMFLOW_HEARTBEAT=HEARTBEAT)
        started.append(app)
        return app

    try:
        yield start
    finally:
        for app in started:
            app.stop()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("ending", ["SIGKILL", "SIGTERM"])
async def test_a_producer_s_answer_is_continued_by_another_instance(
        model: Model, apps: Any, ending: str) -> None:
    """SIGKILL: the lease lapses and another instance claims it. SIGTERM (a restart): the
    client of the POST hung up, so uvicorn shuts the instance down at once, and the app's
    lifespan hands the answer over (without that, nobody would go on with it: the
    readers would end with a timeout)."""
    async with ReplayServer({PATHS["openai-chat"]: model}) as upstream:
        one, two = apps(upstream.url), apps(upstream.url)
        await anyio.to_thread.run_sync(one.wait_ready)
        await anyio.to_thread.run_sync(two.wait_ready)
        chat = uuid.uuid4().hex
        first, tailing = EventSourceClient(), EventSourceClient()
        async with httpx.AsyncClient(timeout=30) as http:
            async with anyio.create_task_group() as group:
                async with http.stream("POST", f"{one.url}/chat/{chat}") as response:
                    assert response.status_code == 200
                    first.token = tailing.token = response.headers["x-resume-token"]

                    async def tail() -> None:  # a reader on the other instance, from the start
                        async with http.stream("GET", f"{two.url}/chat/{chat}/stream",
                                               headers={"x-resume-token": tailing.token}) as r:
                            assert r.status_code == 200
                            await tailing.read(r)

                    group.start_soon(tail)
                    await first.read(response, stop_after=12)  # thinking, a few words
                    stopped_after = first.events
                    if ending == "SIGKILL":
                        one.kill()  # no terminal entry, no lease renewal, no goodbye
                if ending == "SIGTERM":
                    one.proc.terminate()
                    one.proc.wait(20)  # (uvicorn re-raises the signal once it shut down)
                    assert "Application shutdown complete" in one.log.read_text()
            started = time.monotonic()
            async with http.stream("GET", f"{two.url}/chat/{chat}/stream",
                                   headers=first.headers) as response:
                assert response.status_code == 200
                with anyio.fail_after(30):
                    await first.read(response)
        took = time.monotonic() - started
    for reader in (first, tailing):
        reader.decoder.close()  # the stream ended with its stop: no error
        message = reader.decoder.message
        assert message.text == TEXT and message.thinking == THINKING
        (call,) = message.tool_calls
        assert (call.name, call.arguments) == ("get_weather", json.loads(CALL[2]))
        assert sum(1 for e in reader.received if e.event_type == "stop") == 1
    assert first.events == tailing.events  # the reconnecting reader lost nothing
    assert stopped_after >= 12 and len(model.asked) == 2
    mode, kept = model.asked[1]  # the second instance asked with the answer so far
    assert mode == "instruction" and kept and TEXT.startswith(kept) and len(kept) < len(TEXT)
    delivery = first.decoder.message.delivery
    assert delivery is not None
    assert [a["outcome"] for a in delivery["attempts"]] == ["cut", "stop"]
    assert delivery["attempts"][0]["endpoint"] == "an earlier producer"
    assert took < 15, took  # the lease lapsed (or was handed over) and the answer went on


async def test_a_producer_that_lost_its_lease_writes_no_more(redis_url: str) -> None:
    """Another instance took the answer over (this producer stalled past its lease): the
    producer stops at once, with no entry more -- not even a terminal one."""
    from streamflow.app.providers import OpenAIChatProvider
    from streamflow.servers.web.resume import ResumableStreams

    model = Model("openai-chat", delay=0.05)
    async with ReplayServer({PATHS["openai-chat"]: model}) as upstream:
        chain = streamflow.Failover([OpenAIChatProvider(base_url=upstream.url + "/v1",
                                                        model="m", api_key="k")], tries=1)
        streams = ResumableStreams(redis_url, chains={"chat": chain}, heartbeat=0.2)
        async with streams.running():
            started = await streams.start("lost", chain.source("Weather?"))
            await anyio.sleep(0.3)
            lease = f"{streams.prefix}lease:{started.key}"
            assert str(await streams.link.call("get", lease)).startswith(streams.instance)
            await streams.link.call("set", lease, "another-instance", px=60_000)
            await anyio.sleep(0.6)  # a renewal or two later
            length = await streams.link.call("xlen", started.key)
            await anyio.sleep(0.5)
            assert await streams.link.call("xlen", started.key) == length  # nothing more
            last = await streams.link.call("xrevrange", started.key, "+", "-", count=1)
            assert last[0][1]["k"] != "end"  # and no terminal entry: the other writes on
            assert await streams.link.call("get", lease) == "another-instance"


async def takeover_in_process(url: str) -> None:
    """Instance A's lease lapses (taken from under it, as if it stalled past it); instance B
    claims it and continues the answer; A stops writing; the reader reads one answer."""
    from streamflow.app.providers import OpenAIChatProvider
    from streamflow.reactive.sources import from_redis
    from streamflow.servers.web.resume import ResumableStreams

    model = Model("openai-chat", delay=0.03)
    async with ReplayServer({PATHS["openai-chat"]: model}) as upstream:
        chain = streamflow.Failover([OpenAIChatProvider(base_url=upstream.url + "/v1",
                                                        model="m", api_key="k")], tries=1)
        a = ResumableStreams(url, chains={"chat": chain}, heartbeat=0.2)
        b = ResumableStreams(url, chains={"chat": chain}, heartbeat=0.2)
        async with a.running(), b.running():
            started = await a.start("moved", chain.source("Weather?"))
            await anyio.sleep(0.5)  # some of the answer is in the stream
            lease = f"{a.prefix}lease:{started.key}"
            await a.link.call("delete", lease)  # lapsed: B's watch claims it
            await a.link.call("zadd", f"{a.prefix}producing", {started.key: 0})
            with anyio.fail_after(20):
                message = await streamflow.run(from_redis(url, started.key))
            with anyio.fail_after(5):  # B ended the answer and lets the lease go
                while await b.link.call("get", lease) is not None:
                    await anyio.sleep(0.05)
    assert message.text == TEXT and message.thinking == THINKING
    assert len(message.tool_calls) == 1
    assert len(model.asked) == 2 and model.asked[1][0] == "instruction"
    assert [x["outcome"] for x in message.delivery["attempts"]] == ["cut", "stop"]  # type: ignore[index]


async def test_an_answer_moves_to_another_instance_when_its_lease_lapses(
        redis_url: str) -> None:
    await takeover_in_process(redis_url)


async def test_an_answer_moves_to_another_instance_on_a_redis_cluster(
        cluster_url: str) -> None:
    await takeover_in_process(cluster_url)


async def test_an_instance_renews_all_its_leases_together_and_loses_only_the_taken_one(
        redis_url: str) -> None:
    """One ``Leases`` per instance: each held lease stays alive past its own length while
    renewed together; one taken by another instance ends only its holder's wait."""
    await leases_renewed_together(redis_url)


async def test_leases_are_renewed_together_on_a_redis_cluster(cluster_url: str) -> None:
    """The same on the six-node cluster: the leases' slots are spread over its nodes."""
    await leases_renewed_together(cluster_url)


async def leases_renewed_together(redis_url: str) -> None:
    from streamflow.servers.web._resume_lease import Lease
    from streamflow.servers.web.resume import ResumableStreams

    chain = streamflow.Failover([streamflow.Endpoint("anthropic", lambda chat: None)])
    streams = ResumableStreams(redis_url, chains={"chat": chain}, heartbeat=0.2)
    lost: list[str] = []
    async with streams.running(), anyio.create_task_group() as group:
        leases = [Lease(streams, f"stream-{i}") for i in range(30)]
        for lease in leases:
            await lease.take({"chain": "chat", "request": {}})

            async def keep(lease: Lease = lease) -> None:
                assert not await lease.keep()
                lost.append(lease.key)

            group.start_soon(keep)
        await anyio.sleep(1.2)  # twice a lease's length (three heartbeats)
        link = streams.link
        for lease in leases:
            assert await link.call("get", lease.lease_key) == lease.holder
        await link.call("set", leases[7].lease_key, "another-instance", px=60_000)
        with anyio.fail_after(5):
            while not lost:
                await anyio.sleep(0.02)
        await anyio.sleep(0.8)  # past the lost lease's last lapse time
        assert lost == ["stream-7"]
        listed = dict(await link.call("zrange", f"{streams.prefix}producing", 0, -1,
                                      withscores=True))
        now_ms = time.time() * 1000
        for lease in leases:  # each listed as lapsing later, but the lost one
            assert (listed[lease.key] > now_ms) == (lease.key != "stream-7"), lease.key
        group.cancel_scope.cancel()
