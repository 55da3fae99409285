"""The ``--web`` demo app without a browser: page, static files, chat stream, flag, model."""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx
import pytest
from security.hostile import serve_sync

from streamflow.cli import demo as demo_cli
from streamflow.demo import DEMO_PROMPT
from streamflow.demo._web import demo_app
from streamflow.demo.plan import Plan
from streamflow.demo.session import DemoOptions
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


def payloads(body: bytes) -> list[Any]:
    return [json.loads(d) for e in body.decode().split("\n\n") if e
            if (d := e.removeprefix("data: ")) != "[DONE]"]


async def test_the_page_its_files_and_the_bundled_conversation() -> None:
    app = demo_app(Plan("replay", "openai-chat", reason="test"), DemoOptions(fast=True))
    with serve_sync(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            page = await client.get("/")
            script = await client.get("/static/app.js")
            style = await client.get("/static/app.css")
            config = (await client.get("/api/config")).json()
            chat = await client.post("/api/chat", json={"prompt": "ignored: replay"})
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert '<script src="/static/app.js"' in page.text and "http" not in page.text.lower()
    assert script.status_code == 200 and "innerHTML" not in script.text
    assert style.status_code == 200
    assert config["prompt"] == DEMO_PROMPT and config["live"] is False
    assert config["dialect"] == "openai-chat"
    chunks = payloads(chat.content)
    types = [c["type"] for c in chunks]
    assert types.count("start-step") == 2 and types[-1] == "finish"
    assert "tool-output-available" in types
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert "Lisbon" in text


def test_web_keeps_the_demo_rules_for_prompt(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    parser = argparse.ArgumentParser()
    demo_cli.add_arguments(parser)
    args = parser.parse_args(["--web", "--prompt", "hi"])
    assert args.web and args.port == 0
    assert demo_cli.run(args) == 2
    assert "--prompt needs a live provider" in capsys.readouterr().err


async def test_a_base_url_without_model_asks_the_server_which_model_it_serves() -> None:
    """Issue 26: the header (and the requests) name the served model, not gpt-4.1-mini."""
    models = Route(chunks=[json.dumps({"object": "list", "data": [
        {"id": "llama-3.2-3b", "object": "model"}, {"id": "other", "object": "model"}]}
        ).encode()], content_type="application/json")
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "llama-3.2-3b",
             "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    async with ReplayServer({"/v1/models": models,
                             "/v1/chat/completions": Route(chunks=[body])}) as upstream:
        plan = Plan("live", "openai-chat", upstream.url + "/v1", None, reason="--base-url")
        with serve_sync(demo_app(plan)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                config = (await client.get("/api/config")).json()
                chat = await client.post("/api/chat", json={"prompt": "hello"})
        sent = [hit for hit in upstream.hits if hit.path == "/v1/chat/completions"]
    assert config["model"] == "llama-3.2-3b" and config["prices"] is None
    assert chat.status_code == 200 and sent and sent[0].json()["model"] == "llama-3.2-3b"


async def test_a_server_without_a_model_list_leaves_the_model_to_the_stream() -> None:
    async with ReplayServer({"/v1/chat/completions": Route(chunks=[b"data: [DONE]\n\n"])}
                            ) as upstream:  # /v1/models: 404
        plan = Plan("live", "openai-chat", upstream.url + "/v1", None, reason="--base-url")
        with serve_sync(demo_app(plan)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                config = (await client.get("/api/config")).json()
    assert config["model"] is None


async def test_the_page_waits_for_ask_and_loads_its_markdown_renderer() -> None:
    app = demo_app(Plan("replay", "anthropic", reason="test"), DemoOptions(fast=True))
    with serve_sync(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            page = (await client.get("/")).text
            script = (await client.get("/static/app.js")).text
            markdown = await client.get("/static/markdown.js")
    assert '<script src="/static/markdown.js"' in page
    assert markdown.status_code == 200
    for js in (script, markdown.text):
        assert "innerHTML" not in js and "insertAdjacentHTML" not in js
        assert "document.write" not in js and "eval(" not in js
    assert "ask(config.prompt)" not in script  # nothing runs on load
