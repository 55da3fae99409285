"""examples/chat_app.py over real uvicorn: three turns (turn 2 runs a tool, turn 3 refers back to
turn 1), the app restarted between turns on the same SQLite file, and the scripted loopback
upstream checked for the whole history each time (signed thinking byte for byte)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from realdata import ROOT
from realredis import redis_server, redis_url  # noqa: F401 - fixtures
from security.hostile import serve_sync
from test_responses import TOOL_TURN

from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


def text_turn(text: str, *more: str) -> bytes:
    """An Anthropic SSE body answering ``text`` (and ``more``, one text delta each)."""
    events = [
        {"type": "message_start", "message": {
            "id": "msg_x", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
          for t in (text, *more)),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"}]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def load_app(db: Path, upstream: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh import of the example app (a restarted process sees only the database file)."""
    monkeypatch.setenv("CHAT_DB", str(db))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    spec = importlib.util.spec_from_file_location("chat_app_run", ROOT / "examples/chat_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


TOKENS: dict[str, str] = {}
"""The chat's resume token, as the page keeps it (ResumableStreams issues it on the first
answer and wants it back for the next ones)."""


async def ask(module: Any, chat_id: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One POST as useChat sends it; the chat's stored messages afterwards."""
    with serve_sync(module.app) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            token = TOKENS.get(chat_id)
            answer = await client.post(url + "/api/chat", json={
                "id": chat_id, "trigger": "submit-message", "messages": messages},
                headers={"x-resume-token": token} if token else {})
            if answer.headers.get("x-resume-token"):
                TOKENS[chat_id] = answer.headers["x-resume-token"]
            assert answer.status_code == 200 and b'"finish"' in answer.content
            with anyio.fail_after(5):  # through Redis, on_finish runs as the producer ends
                while (stored := (await client.get(url + f"/api/chat/{chat_id}")).json()
                       )[-1]["role"] != "assistant":
                    await anyio.sleep(0.05)
    module.store.db.close()
    assert isinstance(stored, list)
    return stored


@pytest.mark.parametrize("shared", ["sqlite", "sqlite+redis"])
async def test_three_turns_with_restarts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         request: pytest.FixtureRequest, shared: str) -> None:
    """Three turns, the app restarted between them; with REDIS_URL every answer, the tool
    turn's whole agent run included, goes through ResumableStreams."""
    if shared == "sqlite+redis":
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_url"))
    else:
        monkeypatch.delenv("REDIS_URL", raising=False)
    db = tmp_path / "chats.db"
    TOKENS.clear()
    routes = {"/v1/messages": [Route.from_body(text_turn("Hello Ada!")),
                               Route.from_body(TOOL_TURN.read_bytes()),
                               Route.from_body(text_turn("17 degrees in Paris.")),
                               Route.from_body(text_turn("Your name is Ada."))]}
    async with ReplayServer(routes) as upstream:
        stored = await ask(load_app(db, upstream.url, monkeypatch), "c1",
                           [user("u1", "Hi, I am Ada.")])
        assert [m["role"] for m in stored] == ["user", "assistant"]
        # turn 2: only the new message is sent; the app loads the rest from the file
        stored = await ask(load_app(db, upstream.url, monkeypatch), "c1",
                           [user("u2", "Weather in Paris?")])
        tool = next(p for p in stored[3]["parts"] if p["type"] == "tool-get_weather")
        assert tool["state"] == "output-available" and tool["output"]["temperature"] == 17
        stored = await ask(load_app(db, upstream.url, monkeypatch), "c1",
                           [*stored, user("u3", "What is my name?")])
        bodies = [hit.json() for hit in upstream.hits]
    assert stored[-1]["parts"][-1]["text"] == "Your name is Ada."
    assert all(b["system"] == "You are a helpful assistant." for b in bodies)
    last = bodies[-1]["messages"]
    assert last[0] == {"role": "user", "content": [{"type": "text", "text": "Hi, I am Ada."}]}
    assert last[1]["content"] == [{"type": "text", "text": "Hello Ada!"}]
    signed = next(b for m in last for b in m["content"] if b["type"] == "thinking")
    sent = TOOL_TURN.read_text()
    assert json.dumps(signed["signature"])[1:-1] in sent  # the provider's signature, unchanged
    results = [b for m in last for b in m["content"] if b["type"] == "tool_result"]
    assert len(results) == 1 and json.loads(results[0]["content"])["city"] == "Paris"
    assert last[-1] == {"role": "user", "content": [{"type": "text", "text": "What is my name?"}]}
    assert bodies[2]["messages"][:len(bodies[1]["messages"])] == bodies[1]["messages"]
