"""``streamflow demo --web`` in a real browser: chromium (found on PATH) driven by
Playwright for Python.

The page is served by the real command (a subprocess on a free loopback port). The
bundled conversation must render its thinking (collapsed), the ``get_weather`` call
with its arguments and result, the answer and the usage footer; an XSS payload in
live model text must show literally and run nothing. The screenshot is saved under
the test's tmp dir; ``STREAMFLOW_UPDATE_SCREENSHOT=1`` writes docs/web-demo.png.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from parts import program
from realdata import DATA, ROOT

from streamflow.decoder import assemble
from streamflow.demo import recording
from streamflow.server import ReplayServer, Route

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
XSS = '<img src=x onerror="window.__xss=1"> and <script>window.__xss=2;alert(2)</script> done'

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
CHROMIUM = program("chromium", "chromium-browser", module=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=ARGS)
        yield browser
        browser.close()


@contextmanager
def web_demo(*flags: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamflow demo --web`` running; yields the URL it printed."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    proc = subprocess.Popen([sys.executable, "-m", "streamflow", "demo", "--web", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**environ, **(env or {})})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("open http://127.0.0.1:"), (line, proc.stderr and proc.stderr.read())
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(10)


@contextmanager
def replay_in_thread(route: Route) -> Iterator[str]:
    """A ReplayServer on its own event loop in a thread; yields its URL."""
    ready, stop = threading.Event(), threading.Event()
    url: list[str] = []

    async def main() -> None:
        async with ReplayServer(route) as server:
            url.append(server.url)
            ready.set()
            await anyio.to_thread.run_sync(stop.wait)

    thread = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield url[0]
    finally:
        stop.set()
        thread.join(10)


def open_page(browser: Any, url: str, state: str = "done") -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 900, "height": 900})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    page.wait_for_selector(f"article.assistant[data-state={state}]", timeout=30_000)
    return page, dialogs


def test_the_bundled_conversation_renders(browser: Any, tmp_path: Path) -> None:
    turn1, turn2 = (assemble(recording("anthropic", n), "anthropic") for n in (1, 2))
    call = turn1.tool_calls[0]
    with web_demo("--fast", "--offline") as url:
        page, dialogs = open_page(browser, url)
        texts = page.locator(".assistant .text").all_text_contents()
        assert texts == [turn1.text, turn2.text]
        thinking = page.locator("details.thinking")
        assert thinking.count() == 1 and thinking.get_attribute("open") is None  # collapsed
        assert thinking.locator("pre").text_content() == turn1.thinking
        tool = page.locator(f'.tool[data-tool-call-id="{call.tool_call_id}"]')
        assert tool.locator(".tool-name").text_content() == "get_weather"
        assert json.loads(tool.locator(".tool-args").text_content() or "") == call.arguments
        result = json.loads(tool.locator(".tool-result").text_content() or "")
        assert result["city"] == "Lisbon" and result["temperature"] == 17
        assert "done" in (tool.get_attribute("class") or "")
        usage = page.locator(".assistant .usage").text_content() or ""
        prompt = sum(t.usage_metadata.prompt_tokens for t in (turn1, turn2))  # type: ignore[union-attr]
        output = sum(t.usage_metadata.response_tokens for t in (turn1, turn2))  # type: ignore[union-attr]
        assert "2 turns" in usage and f"{prompt:,} input + {output:,} output tokens" in usage
        assert "$" in usage
        assert dialogs == []
        shot = tmp_path / "web-demo.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        if os.environ.get("STREAMFLOW_UPDATE_SCREENSHOT"):
            shutil.copy(shot, ROOT / "docs" / "web-demo.png")


def _chat_chunks(*texts: str) -> bytes:
    def event(payload: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    base = {"id": "chatcmpl-xss", "object": "chat.completion.chunk", "created": 1,
            "model": "evil-model"}
    body = b"".join(event({**base, "choices": [{"index": 0, "delta": {"content": t}}]})
                    for t in texts)
    body += event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}})
    return body + b"data: [DONE]\n\n"


def test_model_text_is_shown_as_text_and_runs_nothing(browser: Any) -> None:
    half = len(XSS) // 2
    route = Route(chunks=[_chat_chunks(XSS[:half], XSS[half:])])
    with replay_in_thread(route) as upstream, \
            web_demo("--base-url", upstream + "/v1", env={"OPENAI_API_KEY": "test"}) as url:
        page, dialogs = open_page(browser, url)
        assert page.locator(".assistant .text").all_text_contents() == [XSS]
        assert page.locator(".assistant img, .assistant script").count() == 0
        assert page.evaluate("window.__xss") is None
        assert dialogs == []
        assert "evil-model" in (page.locator(".assistant .usage").text_content() or "")


def test_a_failed_stream_keeps_the_partial_answer_and_shows_the_error(browser: Any) -> None:
    route = Route(chunks=[(DATA / "openai_chat" / "error_mid_stream.sse").read_bytes()])
    with replay_in_thread(route) as upstream, \
            web_demo("--base-url", upstream + "/v1", env={"OPENAI_API_KEY": "test"}) as url:
        page, _ = open_page(browser, url, state="error")
        assert page.locator(".assistant .text").all_text_contents() == ["Partial answer"]
        error = page.locator(".assistant .error").text_content() or ""
        assert "ProviderError" in error and "provider became unavailable" in error
