"""The chat backend of docs/web.md ("Your own app") runs as written.

The snippet is cut out of docs/web.md and imported as ``app.py``; the provider is the
demo's loopback server (``ANTHROPIC_BASE_URL``), uvicorn serves the app, and the two
endpoints get the bodies useChat and an AG-UI HttpAgent send.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from realdata import ROOT
from security.hostile import serve_sync

from streamflow.demo.server import DemoServer

pytestmark = pytest.mark.anyio


def readme_app(tmp_path: Path) -> Any:
    """The app of the guide's section, imported from its own file."""
    guide = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    section = guide.split("## Your own app", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "no python block in the guide's section"
    path = tmp_path / "app.py"
    path.write_text(code.group(1), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("readme_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


@asynccontextmanager
async def readme_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """The README app served by uvicorn, its provider the demo's loopback server; the URL."""
    pytest.importorskip("starlette", reason="the README snippet needs the web extra")
    async with DemoServer("anthropic", fast=True) as upstream:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("CHAT_DB", str(tmp_path / "chats.db"))  # the app's SQLite file
        with serve_sync(readme_app(tmp_path)) as url:
            yield url


def payloads(body: bytes) -> list[Any]:
    return [json.loads(d) for e in body.decode().split("\n\n") if e
            if (d := e.removeprefix("data: ")) != "[DONE]"]


async def test_the_readme_app_serves_both_protocols(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with readme_served(tmp_path, monkeypatch) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            chat = await client.post(url + "/api/chat", json={
                "id": "chat1", "trigger": "submit-message", "messages": [{
                    "id": "u1", "role": "user",
                    "parts": [{"type": "text", "text": "Weather in Lisbon?"}]}]})
            agui = await client.post(url + "/api/agui", json={
                "threadId": "thread-1", "runId": "run-1", "state": {}, "tools": [],
                "context": [], "forwardedProps": {},
                "messages": [{"id": "u1", "role": "user", "content": "Weather in Lisbon?"}]})
    assert chat.headers["x-vercel-ai-ui-message-stream"] == "v1"
    chunks = payloads(chat.content)
    assert [c["type"] for c in chunks].count("start-step") == 2
    output = next(c for c in chunks if c["type"] == "tool-output-available")["output"]
    assert output == {"city": "Lisbon", "unit": "celsius", "temperature": 17,
                      "conditions": "partly cloudy"}
    assert chunks[-1]["type"] == "finish"
    events = payloads(agui.content)
    assert events[0] == {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"}
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["runId"] == "run-1"


async def test_the_real_clients_talk_to_the_readme_app_over_http(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node_clients: Path) -> None:
    """useChat's DefaultChatTransport and AG-UI's HttpAgent, in Node, against the app."""
    async with readme_served(tmp_path, monkeypatch) as url:
        done = await anyio.run_process(
            ["node", "http_clients.mjs", url + "/api/chat", url + "/api/agui"],
            cwd=node_clients, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    result = json.loads(done.stdout)
    message = result["vercel"]["message"]
    assert result["vercel"]["errors"] == []
    assert [p["type"] for p in message["parts"]] == [
        "step-start", "reasoning", "text", "tool-get_weather", "step-start", "text"]
    assert message["parts"][3]["state"] == "output-available"
    assert message["parts"][3]["output"]["temperature"] == 17
    assert "jacket" in message["parts"][5]["text"]
    agui = result["agui"]
    assert agui["events"][0] == "RUN_STARTED" and agui["events"][-1] == "RUN_FINISHED"
    roles = [m["role"] for m in agui["messages"]]
    assert roles[0] == "user" and "tool" in roles and roles[-1] == "assistant"
    tool = next(m for m in agui["messages"] if m["role"] == "tool")
    assert json.loads(tool["content"])["temperature"] == 17
    assert "jacket" in agui["messages"][-1]["content"]
