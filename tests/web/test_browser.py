"""``streamflow demo --web`` in a real browser: Debian's chromium driven by Playwright for Python.

The page is served by the real command (a subprocess on a free loopback port). The
page waits for Ask, and each Ask is one run (one ``POST /api/chat``). The bundled
conversation must render its thinking (collapsed), the ``get_weather`` call with its
arguments and result, the answer with its Markdown drawn (bold, a list) and the
usage footer; an XSS payload in live model text, raw HTML or a ``javascript:`` link
in its Markdown, must show as text and run nothing. Chromium is found on ``PATH``.
The screenshot is saved under the test's tmp dir; ``STREAMFLOW_UPDATE_SCREENSHOT=1``
writes docs/web-demo.png.
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

from streamflow.demo import recording
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.decoder import assemble

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
def replay_in_thread(route: Route | dict[str, Route]) -> Iterator[str]:
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
    """The page after one Ask, its answer in ``state``; the dialogs it opened."""
    page = browser.new_page(viewport={"width": 900, "height": 900})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    page.wait_for_selector("#send:not([disabled])", timeout=30_000)
    page.click("#send")
    page.wait_for_selector(f"article.assistant[data-state={state}]", timeout=30_000)
    return page, dialogs


def test_the_bundled_conversation_renders(browser: Any, tmp_path: Path) -> None:
    turn1, turn2 = (assemble(recording("anthropic", n), "anthropic") for n in (1, 2))
    call = turn1.tool_calls[0]
    with web_demo("--fast", "--offline") as url:
        page, dialogs = open_page(browser, url)
        texts = page.locator(".assistant .text")
        assert texts.count() == 2 and texts.nth(0).text_content() == turn1.text
        answer = texts.nth(1)  # Markdown drawn: paragraphs, bold, a bullet list
        assert answer.locator("strong").all_text_contents() == [
            "17 °C", "13 °C", "Yes, bring a light jacket"]
        assert answer.locator("ul > li").count() == 2 and answer.locator("p").count() == 3
        assert "**" not in (answer.text_content() or "")
        assert answer.locator("li").nth(1).text_content() == (
            "No umbrella needed: no rain is expected before tomorrow.")
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


def test_one_run_per_ask(browser: Any) -> None:
    with web_demo("--fast", "--offline") as url:
        page = browser.new_page()
        posts: list[str] = []
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        page.goto(url)
        page.wait_for_selector("#send:not([disabled])", timeout=30_000)
        page.wait_for_timeout(500)  # nothing runs until Ask
        assert posts == [] and page.locator("article.assistant").count() == 0
        page.click("#send")
        page.wait_for_selector("article.assistant[data-state=done]", timeout=30_000)
        assert len(posts) == 1 and posts[0].endswith("/api/chat")
        assert page.locator("article.assistant").count() == 1
        assert page.locator(".user").count() == 1
        page.click("#send")
        page.wait_for_selector("article.assistant:nth-of-type(2)[data-state=done]",
                               timeout=30_000)
        assert len(posts) == 2 and page.locator("article.assistant").count() == 2


MARKDOWN_ATTACKS = [
    "**bold** <b>raw</b> [x](javascript:alert(1)) [ok](https://example.test/a?b=1)",
    "<img src=x onerror=alert(1)>\n\n- item <script>alert(1)</script>\n- `<code>` & *em*",
    "# Title <svg onload=alert(1)>\n\n```html\n<iframe src=x></iframe>\n```\n> quote <a href=x>",
    "[**nested**](data:text/html,<script>alert(1)</script>) _under_ 1. one\n1. two\n2) three",
]
ALLOWED = {"P", "STRONG", "EM", "CODE", "PRE", "UL", "OL", "LI", "A", "H3", "H4", "H5", "H6",
           "HR", "BLOCKQUOTE"}


def test_the_markdown_renderer_builds_only_safe_nodes(browser: Any) -> None:
    """markdown.js on hostile inputs: allowed tags only, no handler attributes, safe links."""
    with web_demo("--fast", "--offline") as url:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#send:not([disabled])", timeout=30_000)
        for source in MARKDOWN_ATTACKS:
            found = page.evaluate("""source => {
                const box = document.createElement("div");
                Markdown.render(box, source);
                document.body.append(box);
                const nodes = [...box.querySelectorAll("*")];
                return {tags: nodes.map(n => n.tagName),
                        attrs: nodes.flatMap(n => [...n.attributes].map(a => a.name)),
                        hrefs: nodes.filter(n => n.tagName === "A").map(n => n.href),
                        text: box.textContent};
            }""", source)
            assert set(found["tags"]) <= ALLOWED, (source, found)
            assert set(found["attrs"]) <= {"href", "rel", "target", "start"}, found
            assert all(h.startswith("https://") for h in found["hrefs"]), found
            assert found["text"].count("<") == source.count("<"), found  # all shown as text
        assert page.evaluate("window.__xss") is None
        shown = page.evaluate("""() => {
            const box = document.createElement("div");
            Markdown.render(box, "**bold** <b>raw</b> [x](javascript:alert(1))");
            return [box.querySelector("strong").textContent, box.textContent];
        }""")
        assert shown == ["bold", "bold <b>raw</b> [x](javascript:alert(1))"]


def test_a_base_url_without_model_shows_the_model_the_server_reports(browser: Any) -> None:
    models = Route(chunks=[json.dumps({"object": "list", "data": [
        {"id": "qwen2.5-7b-instruct", "object": "model"}]}).encode()],
        content_type="application/json")
    routes = {"/v1/models": models, "/v1/chat/completions": Route(chunks=[_chat_chunks("hi")])}
    with replay_in_thread(routes) as upstream, \
            web_demo("--base-url", upstream + "/v1", env={"OPENAI_API_KEY": "test"}) as url:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#send:not([disabled])", timeout=30_000)
        header = page.locator("#source").text_content() or ""
        assert "qwen2.5-7b-instruct" in header and "gpt-4.1-mini" not in header


def test_without_a_model_list_the_header_shows_the_streamed_model(browser: Any) -> None:
    route = Route(chunks=[_chat_chunks("hi")])  # every path, /v1/models too, gets the stream
    with replay_in_thread(route) as upstream, \
            web_demo("--base-url", upstream + "/v1", env={"OPENAI_API_KEY": "test"}) as url:
        page, _ = open_page(browser, url)
        header = page.locator("#source").text_content() or ""
        assert header.endswith("evil-model") and "gpt-4.1-mini" not in header
