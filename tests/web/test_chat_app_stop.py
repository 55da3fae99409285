"""Stop from anywhere: two instances of the example app share a real redis-server and the SQLite
file; an answer streaming from instance A is stopped by a POST to instance B. The upstream
closes within a second, A's reader ends with the cancelled terminal entry after the partial, and
on_finish stores the partial."""

from __future__ import annotations

import json
import shutil
import time

import anyio
import httpx
import pytest
from realredis import redis_server, redis_url  # noqa: F401 - fixtures
from security.hostile import serve_sync
from test_chat_app import load_app, text_turn, user

from streamflow.demo.server import event_chunks
from streamflow.servers.replay import ReplayServer, Route

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs Debian's redis-server")]


async def test_stop_on_another_instance(tmp_path: object, redis_url: str,  # noqa: F811
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "chats.db"  # type: ignore[operator]
    monkeypatch.setenv("REDIS_URL", redis_url)
    slow = event_chunks(text_turn(*["A long answer. "] * 40))
    async with ReplayServer(Route(chunks=slow, delays=[0.0] + [0.3] * (len(slow) - 1))) as up:
        first = load_app(db, up.url, monkeypatch)
        second = load_app(db, up.url, monkeypatch)
        with serve_sync(first.app) as a, serve_sync(second.app) as b:
            async with httpx.AsyncClient(timeout=30) as client:
                async with client.stream("POST", a + "/api/chat", json={
                        "id": "c9", "messages": [user("u1", "Talk.")]}) as answer:
                    token = answer.headers["x-resume-token"]
                    body = b""
                    reader = answer.aiter_bytes()
                    while body.count(b"text-delta") < 2:
                        body += await reader.__anext__()
                    refused = await client.post(b + "/api/chat/c9/stop")
                    asked = time.monotonic()
                    stopped = await client.post(b + "/api/chat/c9/stop",
                                                headers={"x-resume-token": token})
                    with anyio.fail_after(10):
                        async for data in reader:
                            body += data
                with anyio.fail_after(5):
                    hit = await up.wait_disconnect()
                closed = time.monotonic() - asked
                with anyio.fail_after(5):
                    while (saved := first.store.load("c9"))[-1]["role"] != "assistant":
                        await anyio.sleep(0.05)
        first.store.db.close()
        second.store.db.close()
    assert refused.status_code == 403 and stopped.status_code == 204
    assert hit.disconnected and not hit.completed and closed < 1.5
    chunks = [json.loads(line[6:]) for line in body.decode().splitlines()
              if line.startswith("data: {")]
    assert chunks[-1]["type"] == "error" and "stopped" in chunks[-1]["errorText"]
    assert any(c["type"] == "text-delta" for c in chunks)  # the partial came first
    assert saved[-1]["parts"][-1]["text"].startswith("A long answer.")
