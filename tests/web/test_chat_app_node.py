"""The example chat app driven by the real AI SDK client (DefaultChatTransport +
readUIMessageStream, tests/web/node/chat_turn.mjs): three turns, the app restarted between them
on the same SQLite file; turn 2 runs a tool, turn 3 refers back to turn 1 (the scripted upstream
gets the whole history); then a turn the client stops mid-answer is stored as its partial."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from realredis import redis_server, redis_url  # noqa: F401 - fixtures
from security.hostile import serve_sync
from test_chat_app import TOOL_TURN, load_app, text_turn, user

from streamflow.demo.server import event_chunks
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


async def node_turn(node_dir: Path, tmp_path: Path, url: str, chat_id: str,
                    messages: list[dict[str, Any]], abort_after: int | None = None) -> Any:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    args = ["node", str(node_dir / "chat_turn.mjs"), url + "/api/chat", chat_id, str(path)]
    if abort_after is not None:
        args.append(str(abort_after))
    done = await anyio.to_thread.run_sync(lambda: subprocess.run(
        args, capture_output=True, text=True, timeout=120, cwd=node_dir))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_three_turns_from_the_real_client(node_clients: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "chats.db"
    slow = event_chunks(text_turn(*["A long answer. "] * 40))
    routes = {"/v1/messages": [Route.from_body(text_turn("Hello Ada!")),
                               Route.from_body(TOOL_TURN.read_bytes()),
                               Route.from_body(text_turn("17 degrees in Paris.")),
                               Route.from_body(text_turn("Your name is Ada.")),
                               Route(chunks=slow, delays=[0.0] + [0.3] * (len(slow) - 1))]}
    history: list[dict[str, Any]] = []
    async with ReplayServer(routes) as upstream:
        for mid, text in (("u1", "Hi, I am Ada."), ("u2", "Weather in Paris?"),
                          ("u3", "What is my name?")):
            module = load_app(db, upstream.url, monkeypatch)  # a restart: only the file remains
            history.append(user(mid, text))
            with serve_sync(module.app) as url:
                turn = await node_turn(node_clients, tmp_path, url, "c1", history)
            module.store.db.close()
            assert turn["chunks"][-1] == "finish"
            history.append(turn["message"])
        tool = next(p for p in history[3]["parts"] if p["type"] == "tool-get_weather")
        assert tool["state"] == "output-available"
        assert history[-1]["parts"][-1]["text"] == "Your name is Ada."
        third = upstream.hits[3].json()["messages"]
        assert third[0]["content"] == [{"type": "text", "text": "Hi, I am Ada."}]
        assert any(b["type"] == "tool_result" for m in third for b in m["content"])
        assert any(b["type"] == "thinking" and b["signature"] for m in third
                   for b in m["content"])
        # the user presses stop mid-answer: the app cancels the upstream and stores the partial
        module = load_app(db, upstream.url, monkeypatch)
        with serve_sync(module.app) as url:
            stopped = await node_turn(node_clients, tmp_path, url, "c1",
                                      [*history, user("u4", "Tell me more.")], abort_after=4)
            with anyio.fail_after(5):
                hit = await upstream.wait_disconnect()
            with anyio.fail_after(5):
                while not (saved := module.store.load("c1"))[-1]["id"].startswith("u4-"):
                    await anyio.sleep(0.05)
        module.store.db.close()
    assert hit.disconnected and not hit.completed
    assert "finish" not in stopped["chunks"]
    partial = saved[-1]["parts"][-1]
    assert partial["type"] == "text" and partial["text"].startswith("A long answer.")


async def test_three_turns_from_the_real_ag_ui_agent(node_clients: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "chats.db"
    routes = {"/v1/messages": [Route.from_body(text_turn("Hello Ada!")),
                               Route.from_body(TOOL_TURN.read_bytes()),
                               Route.from_body(text_turn("17 degrees in Paris.")),
                               Route.from_body(text_turn("Your name is Ada."))]}
    thread = tmp_path / "thread.json"
    thread.write_text("[]", encoding="utf-8")
    async with ReplayServer(routes) as upstream:
        for text in ("Hi, I am Ada.", "Weather in Paris?", "What is my name?"):
            module = load_app(db, upstream.url, monkeypatch)  # a restart between the turns
            with serve_sync(module.app) as url:
                args = ["node", str(node_clients / "agui_turn.mjs"), url + "/api/agui", "t1",
                        str(thread), text]
                done = await anyio.to_thread.run_sync(lambda a=args: subprocess.run(
                    a, capture_output=True, text=True, timeout=120, cwd=node_clients))
            module.store.db.close()
            assert done.returncode == 0, done.stderr
            turn = json.loads(done.stdout)
            assert turn["events"][0] == "RUN_STARTED" and turn["events"][-1] == "RUN_FINISHED"
        bodies = [hit.json()["messages"] for hit in upstream.hits]
    assert turn["messages"][-1]["content"] == "Your name is Ada."
    assert bodies[-1][0]["content"] == [{"type": "text", "text": "Hi, I am Ada."}]
    assert any(b["type"] == "tool_use" for m in bodies[-1] for b in m["content"])
    assert any(b["type"] == "tool_result" for m in bodies[-1] for b in m["content"])
    assert bodies[-1][-1]["content"] == [{"type": "text", "text": "What is my name?"}]


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs Debian's redis-server")
async def test_the_real_client_stops_an_answer_through_another_instance(
        node_clients: Path, tmp_path: Path, redis_url: str,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "chats.db"
    monkeypatch.setenv("REDIS_URL", redis_url)
    slow = event_chunks(text_turn(*["A long answer. "] * 40))
    async with ReplayServer(Route(chunks=slow, delays=[0.0] + [0.3] * (len(slow) - 1))) as up:
        first = load_app(db, up.url, monkeypatch)
        second = load_app(db, up.url, monkeypatch)
        with serve_sync(first.app) as a, serve_sync(second.app) as b:
            path = tmp_path / "messages.json"
            path.write_text(json.dumps([user("u1", "Talk.")]), encoding="utf-8")
            args = ["node", str(node_clients / "chat_turn.mjs"), a + "/api/chat", "c7",
                    str(path), "4", b + "/api/chat/c7/stop"]
            done = await anyio.to_thread.run_sync(lambda: subprocess.run(
                args, capture_output=True, text=True, timeout=120, cwd=node_clients))
            assert done.returncode == 0, done.stderr
            with anyio.fail_after(5):
                hit = await up.wait_disconnect()
            with anyio.fail_after(5):
                while (saved := first.store.load("c7"))[-1]["role"] != "assistant":
                    await anyio.sleep(0.05)
        first.store.db.close()
        second.store.db.close()
    turn = json.loads(done.stdout)
    assert hit.disconnected and not hit.completed
    assert turn["chunks"][-1] == "error" and "finish" not in turn["chunks"]
    assert turn["message"]["parts"][-1]["text"].startswith("A long answer.")  # the partial
    assert saved[-1]["parts"][-1]["text"].startswith("A long answer.")
