"""The ``--web`` demo app without a browser: page, static files, chat stream, the flag."""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx
import pytest
from serving import serve_app

from streamflow.cli import demo as demo_cli
from streamflow.demo import DEMO_PROMPT
from streamflow.demo.plan import Plan
from streamflow.demo.session import DemoOptions
from streamflow.web.demo import demo_app

pytestmark = pytest.mark.anyio


def payloads(body: bytes) -> list[Any]:
    return [json.loads(d) for e in body.decode().split("\n\n") if e
            if (d := e.removeprefix("data: ")) != "[DONE]"]


async def test_the_page_its_files_and_the_bundled_conversation() -> None:
    app = demo_app(Plan("replay", "openai-chat", reason="test"), DemoOptions(fast=True))
    with serve_app(app) as url:
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
