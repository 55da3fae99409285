"""on_finish over real uvicorn with a replay upstream: once per answer, completed / failed /
aborted with the partial, and the stored UIMessage giving the provider its own blocks back."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import httpx
import pytest
from realdata import DATA
from security.hostile import serve_sync
from test_responses import TOOL_TURN, proxy_app

import streamflow
from streamflow.demo.server import event_chunks
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import (
    Answer,
    ag_ui_response,
    from_ui_messages,
    to_ui_message,
    ui_message_stream_response,
)

pytestmark = pytest.mark.anyio
RESPONSES = [ui_message_stream_response, ag_ui_response]


def recorded_blocks() -> list[dict[str, Any]]:
    """The content blocks the recorded Anthropic turn sent (thinking signed, text, tool_use)."""
    blocks: dict[int, dict[str, Any]] = {}
    for line in TOOL_TURN.read_text().splitlines():
        if not line.startswith("data: "):
            continue
        event = json.loads(line[6:])
        if event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            for key in ("text", "thinking", "signature", "partial_json"):
                if key in delta:
                    block[key] = block.get(key, "") + delta[key]
    for block in blocks.values():
        if "partial_json" in block:
            block["input"] = json.loads(block.pop("partial_json"))
    return [blocks[i] for i in sorted(blocks)]


class Finished:
    """An on_finish that records its calls (the app runs in uvicorn's thread)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Answer, str]] = []
        self.event = threading.Event()

    async def __call__(self, answer: Answer, *, status: str) -> None:
        self.calls.append((answer, status))
        self.event.set()

    async def wait(self) -> None:
        with anyio.fail_after(5):
            while not self.event.is_set():
                await anyio.sleep(0.02)


async def post(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(url)


@pytest.mark.parametrize("respond", RESPONSES)
async def test_completed_answer_round_trips_to_the_provider(respond: Any) -> None:
    finished = Finished()
    async with ReplayServer(Route.from_body(TOOL_TURN.read_bytes())) as upstream:
        app = proxy_app(upstream.url, lambda s: respond(s, on_finish=finished))
        with serve_sync(app) as url:
            response = await post(url + "/chat")
            await finished.wait()
    assert response.status_code == 200
    [(answer, status)] = finished.calls
    assert status == "completed"
    reported = streamflow.assemble([TOOL_TURN.read_bytes()]).usage
    assert reported is not None and answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.response_tokens) == (
        reported.prompt_tokens, reported.response_tokens)  # what the provider said, once
    stored = json.loads(json.dumps(to_ui_message(answer)))  # what the app keeps
    kinds = [p["type"] for p in stored["parts"]]
    assert kinds[:3] == ["step-start", "reasoning", "text"] and kinds[3].startswith("tool-")
    [assistant] = from_ui_messages([stored], dialect="anthropic")
    sent = recorded_blocks()
    assert assistant["role"] == "assistant"
    assert [{k: b[k] for k in sorted(b) if k != "id" or b["type"] == "tool_use"}
            for b in assistant["content"]] == [
        {k: b[k] for k in sorted(b) if k in ("type", "text", "thinking", "signature", "id",
                                             "name", "input")} for b in sent]


async def test_failed_answer_keeps_the_partial() -> None:
    cut = DATA / "cli" / "anthropic_cut.sse"
    finished = Finished()
    async with ReplayServer(Route.from_body(cut.read_bytes())) as upstream:
        app = proxy_app(upstream.url, lambda s: ui_message_stream_response(
            s, on_finish=finished))
        with serve_sync(app) as url:
            await post(url + "/chat")
            await finished.wait()
    [(answer, status)] = finished.calls
    assert status == "failed"
    assert answer.error
    assert answer.turns and answer.turns[0].parts  # what the user saw before the cut


@pytest.mark.parametrize("respond", RESPONSES)
async def test_aborted_answer_when_the_client_leaves(respond: Any) -> None:
    chunks = event_chunks(TOOL_TURN.read_bytes())
    slow = Route(chunks=chunks, delays=[0.0] * 6 + [0.3] * (len(chunks) - 6))
    finished = Finished()
    async with ReplayServer(slow) as upstream:
        app = proxy_app(upstream.url, lambda s: respond(s, on_finish=finished))
        with serve_sync(app) as url:
            async with httpx.AsyncClient(timeout=30) as client:
                async with client.stream("POST", url + "/chat") as response:
                    seen = b""
                    async for data in response.aiter_bytes():
                        seen += data
                        if b"thinking" in seen.lower() or b"REASONING" in seen or len(seen) > 200:
                            break
            await finished.wait()
            await anyio.sleep(0.5)  # a second call would have come by now
    [(answer, status)] = finished.calls
    assert status == "aborted"
    message = to_ui_message(answer)
    assert message["role"] == "assistant"
