"""Resume under hostile clients: chat ids, resume tokens, the authorize hook, live-stream caps.

Attacks on ``streamflow.servers.web.resume`` (see docs/SECURITY.md, "Resume"): ids that are
not ids, guessed ids (reading or taking over someone's answer), and one client
starting streams without end. The app is driven over HTTP through httpx's ASGI
transport (asyncio and trio) against a real redis-server; the example app's
defaults are checked under real uvicorn.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from collections.abc import AsyncIterator
from importlib.resources import files
from typing import Any

import anyio
import httpx
import pytest
from realredis import (
    Instance,
    RedisServer,
    assert_refusal,
    chat_app,
    live_count,
    redis_server,
    redis_url,
    same,
    serving,
)
from starlette.requests import Request

import streamflow
from streamflow.reactive.sources import from_async_iterable, from_bytes
from streamflow.servers.web.resume import ResumableStreams, ResumeRefused

__all__ = ["redis_server", "redis_url"]

pytestmark = pytest.mark.anyio

BODY = (files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()
DIRECT = streamflow.assemble(BODY)
HOSTILE_IDS = ["a:b", "*", "chat*", "a\nb", "a\r\nb", "a\x00b", "a%00b", "x" * 129,
               "x" * 10_000, "ü", "a b", "a..b", "a.b", "{a}", "a'b"]
UNROUTABLE_IDS = ["", "..", "a/b", "../x"]  # an HTTP client cannot even send these as one segment


def other(char: str) -> str:
    """A token character that is not ``char``."""
    return "B" if char == "A" else "A"


def path(chat_id: str) -> str:
    return "/chat/" + urllib.parse.quote(chat_id, safe="")


async def all_redis(url: str) -> dict[str, Any]:
    """Every key in Redis with its value (strings and streams), for leak checks."""
    from streamflow.reactive._redis.streams import RedisLink

    link = RedisLink(url)
    try:
        out: dict[str, Any] = {}
        for key in await link.call("keys", "*"):
            kind = await link.call("type", key)
            out[key] = await (link.call("get", key) if kind == "string"
                              else link.call("xrange", key, "-", "+"))
        return out
    finally:
        await link.aclose()


@pytest.mark.parametrize("to", ["uni", "vercel-ui", "ag-ui"])
async def test_hostile_chat_ids_are_refused_before_they_become_keys(redis_url: str,
                                                                    to: str) -> None:
    streams = ResumableStreams(redis_url)
    async with serving(streams) as http:
        for chat_id in HOSTILE_IDS:
            posted = await http.post(f"{path(chat_id)}?to={to}")
            assert_refusal(posted, to, 400, "invalid_chat_id")
            resumed = await http.get(f"{path(chat_id)}/stream?to={to}")
            assert_refusal(resumed, to, 400, "invalid_chat_id")
        for chat_id in [*HOSTILE_IDS, *UNROUTABLE_IDS]:  # the Python API refuses them too
            with pytest.raises(ResumeRefused) as refused:
                await streams.start(chat_id, from_bytes(BODY))
            assert refused.value.status == 400
        assert await all_redis(redis_url) == {}  # not one key was made of them
        fine = "Az09_-" + "x" * 122  # the documented charset, 128 characters
        assert (await http.post(f"{path(fine)}?to={to}")).status_code == 200


async def test_the_token_is_random_and_only_its_hash_is_kept(redis_url: str) -> None:
    streams = ResumableStreams(redis_url)
    async with serving(streams) as http:
        tokens = [(await http.post(f"/chat/c{n}")).headers["x-resume-token"] for n in range(8)]
    assert len(set(tokens)) == 8
    for token in tokens:  # token_urlsafe(32): 43 characters of 6 bits, 256 bits
        assert len(token) >= 43 and set(token) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    stored = json.dumps(await all_redis(redis_url))
    for n, token in enumerate(tokens):
        assert token not in stored  # never the token itself, in any key or value
        digest = hashlib.sha256(token.encode()).hexdigest()
        assert (await all_redis(redis_url))[f"streamflow:token:c{n}"] == digest


@pytest.mark.parametrize("to", ["uni", "vercel-ui", "ag-ui"])
async def test_resuming_needs_the_chat_s_token(redis_url: str, to: str) -> None:
    streams = ResumableStreams(redis_url)
    async with serving(streams) as http:
        started = await http.post(f"/chat/mine?to={to}")
        token = started.headers["x-resume-token"]
        refused = await http.get(f"/chat/mine/stream?to={to}")
        assert "resume token" in assert_refusal(refused, to, 403, "forbidden")
        wrong = await http.get(f"/chat/mine/stream?to={to}",
                               headers={"x-resume-token": token[:-1] + other(token[-1])})
        assert_refusal(wrong, to, 403, "forbidden")
        long = await http.get(f"/chat/mine/stream?to={to}", headers={"x-resume-token": "A" * 9000})
        assert_refusal(long, to, 403, "forbidden")
        by_header = await http.get(f"/chat/mine/stream?to={to}", headers={"x-resume-token": token})
        by_query = await http.get(f"/chat/mine/stream?to={to}&resume_token={token}")
        nothing = await http.get(f"/chat/never-started/stream?to={to}")
    assert by_header.status_code == by_query.status_code == 200
    assert by_header.content == by_query.content == started.content  # the same answer
    if to == "uni":
        assert same(streamflow.assemble(by_header.content, dialect="uni"), DIRECT)
    assert nothing.status_code == 204  # the AI SDK's "nothing to resume", for a fresh chat


async def test_a_guessed_id_cannot_take_the_chat_over(redis_url: str) -> None:
    streams = ResumableStreams(redis_url)
    async with serving(streams) as http:
        token = (await http.post("/chat/victim")).headers["x-resume-token"]
        before = await all_redis(redis_url)
        taken = await http.post("/chat/victim")  # the attacker's answer would replace it
        assert_refusal(taken, "uni", 403, "forbidden")
        assert await all_redis(redis_url) == before  # no new stream, the pointer unchanged
        again = await http.post("/chat/victim", headers={"x-resume-token": token})
        assert again.status_code == 200 and again.headers["x-resume-token"] == token
        after = await all_redis(redis_url)
    assert after["streamflow:chat:victim"] != before["streamflow:chat:victim"]  # the new one


async def test_the_authorize_hook_is_asked_for_every_request(redis_url: str) -> None:
    asked: list[tuple[str, str]] = []

    async def authorize(request: Request, chat_id: str) -> bool:
        asked.append((request.method, chat_id))
        return request.headers.get("x-user") == "alice" and chat_id.startswith("alice-")

    streams = ResumableStreams(redis_url, authorize=authorize)
    alice = {"x-user": "alice"}
    async with serving(streams) as http:
        assert_refusal(await http.post("/chat/alice-1"), "uni", 403, "forbidden")
        assert_refusal(await http.post("/chat/bob-1", headers=alice), "uni", 403, "forbidden")
        token = (await http.post("/chat/alice-1", headers=alice)).headers["x-resume-token"]
        refused = await http.get("/chat/alice-1/stream", headers={"x-resume-token": token})
        assert_refusal(refused, "uni", 403, "forbidden")  # the token alone is not enough
        resumed = await http.get("/chat/alice-1/stream",
                                 headers={**alice, "x-resume-token": token})
        assert resumed.status_code == 200
    assert asked[:3] == [("POST", "alice-1"), ("POST", "bob-1"), ("POST", "alice-1")]
    assert await all_redis(redis_url)  # something was stored, for alice only
    assert not [k for k in await all_redis(redis_url) if "bob" in k]


async def test_without_tokens_the_hook_alone_decides(redis_url: str) -> None:
    async def owner(request: Request, chat_id: str) -> bool:
        return chat_id.startswith(request.headers.get("x-user", "?") + "-")

    streams = ResumableStreams(redis_url, authorize=owner, tokens=False)
    async with serving(streams) as http:
        started = await http.post("/chat/carol-7", headers={"x-user": "carol"})
        assert "x-resume-token" not in started.headers
        mine = await http.get("/chat/carol-7/stream", headers={"x-user": "carol"})
        theirs = await http.get("/chat/carol-7/stream", headers={"x-user": "dave"})
    assert mine.content == started.content
    assert_refusal(theirs, "uni", 403, "forbidden")


def held(gate: anyio.Event) -> Any:
    """A source that stays live until ``gate`` is set: a model still answering."""

    async def body() -> AsyncIterator[bytes]:
        yield BODY[:200]
        await gate.wait()
        yield BODY[200:]

    return from_async_iterable(body)


@pytest.mark.parametrize("to", ["uni", "vercel-ui", "ag-ui"])
async def test_live_streams_are_capped_per_app_and_per_client(redis_url: str, to: str) -> None:
    streams = ResumableStreams(redis_url, max_live=3, max_live_per_client=2)
    gate = anyio.Event()
    async with serving(streams, peer="10.0.0.1") as one:
        await streams.start("a1", held(gate), client="10.0.0.1")
        await streams.start("a2", held(gate), client="10.0.0.1")
        keys = len(await all_redis(redis_url))
        refused = await one.post(f"/chat/a3?to={to}")  # a third of this client's
        assert "max_live_per_client=2" in assert_refusal(refused, to, 429,
                                                        "too_many_live_streams")
        assert len(await all_redis(redis_url)) == keys  # nothing stored for it
        other = httpx.ASGITransport(app=chat_app(streams), client=("10.0.0.2", 4000))
        async with httpx.AsyncClient(transport=other, base_url="http://app") as two:
            assert (await two.post(f"/chat/b1?to={to}")).status_code == 200  # ran to its end
            await live_count(streams, 2)  # its producer wrote the end entry: one place free
            await streams.start("b2", held(gate), client="10.0.0.2")  # the app's third
            full = await two.post(f"/chat/b3?to={to}")
            assert "max_live=3" in assert_refusal(full, to, 429, "too_many_live_streams")
            gate.set()  # the live answers end: their places are free again
            await live_count(streams, 0)
            assert (await two.post(f"/chat/b3?to={to}")).status_code == 200
        assert (await one.post(f"/chat/a3?to={to}")).status_code == 200
    assert streams.live.total == 0 and not streams.live.by_client


async def test_a_client_key_hook_counts_users_not_addresses(redis_url: str) -> None:
    def user(request: Request) -> str | None:
        return request.headers.get("x-user")

    streams = ResumableStreams(redis_url, max_live_per_client=1, client_key=user)
    gate = anyio.Event()
    async with serving(streams, source=lambda: held(gate)) as http:
        async def first() -> None:
            assert (await http.post("/chat/u1", headers={"x-user": "u"})).status_code == 200

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await live_count(streams, 1)
            second = await http.post("/chat/u2", headers={"x-user": "u"})
            assert_refusal(second, "uni", 429, "too_many_live_streams")
            gate.set()


def test_the_example_app_holds_by_default(redis_server: RedisServer,
                                          tmp_path: Any) -> None:
    """``examples/resumable_chat.py`` under real uvicorn: ids, tokens and caps as documented."""
    redis_server.flush()
    app = Instance(redis_server.url, tmp_path / "app.log", STREAMFLOW_DELAY="0.2",
                   STREAMFLOW_MAX_LIVE_PER_CLIENT="1")
    try:
        app.wait_ready()
        with httpx.Client(base_url=app.url, timeout=30) as http:
            bad = http.post("/ui/chat/a%3Ab")
            assert bad.status_code == 400 and "invalid chat id" in bad.text
            with http.stream("POST", "/chat/one") as live:  # live for ~4 s
                token = live.headers["x-resume-token"]
                busy = http.post("/chat/two?to=ag-ui")
                assert busy.status_code == 429 and busy.json()["type"] == "RUN_ERROR"
                assert http.get("/chat/one/stream").status_code == 403
                assert http.get("/ui/chat/one/stream").status_code == 403
                resumed = http.get("/chat/one/stream", headers={"x-resume-token": token})
                assert resumed.status_code == 200
                assert same(streamflow.assemble(resumed.content, dialect="uni"), DIRECT)
            assert http.get("/chat/nobody/stream").status_code == 204
    finally:
        app.stop()



async def test_a_hostile_last_event_id_never_reaches_an_id_line(redis_url: str) -> None:
    """``Last-Event-ID`` is parsed into numbers; the ``id:`` lines are written from those."""
    import re

    streams = ResumableStreams(redis_url)
    async with serving(streams) as http:
        started = await http.post("/chat/ids")
        token = started.headers["x-resume-token"]
        first = re.findall(rb"^id: (.*)$", started.content, flags=re.M)[3].decode()
        ms, seq = first.split("-")
        arabic = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
        for hostile in (first.translate(arabic), f" {first} ", f"{ms}_0-{seq}",
                        f"{first}/x", "x" * 5000, f"{first}\x7f", "-"):
            resumed = await http.get("/chat/ids/stream",
                                     headers={"x-resume-token": token,
                                              "last-event-id": hostile.encode()})
            assert resumed.status_code == 200
            ids = re.findall(rb"^id: (.*)$", resumed.content, flags=re.M)
            assert ids and all(re.fullmatch(rb"\d+-\d+(/\d+)?", i) for i in ids), (hostile, ids)
            assert same(streamflow.assemble(resumed.content, dialect="uni"), DIRECT)
