"""``agent_run`` carries a whole run to the browser: an Agent whose tools are a real MCP
server's (over stdio), its two turns played by the replay server, served by uvicorn and
read by the real clients (``ai`` v5, the current ``ai`` major, ``@ag-ui``).

Turn 1 streams a call of the MCP ``countdown`` tool (tool input streaming), the tool
reports its progress (preliminary output / ACTIVITY_SNAPSHOT) and returns; turn 2
answers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import StdioServerParameters
from security.hostile import serve_sync
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as HTTPRoute

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import mcp_stdio
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import ag_ui_response, agent_run, ui_message_stream_response
from streamflow.wire.dialects._emitter import Emitter
from streamflow.wire.encoding import encode

pytestmark = pytest.mark.anyio


MCP_SERVER = StdioServerParameters(
    command=sys.executable,
    args=[str(Path(__file__).resolve().parent.parent / "tools" / "mcp_server.py")])


def turn(*, call: str | None = None, text: str = "") -> Route:
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test"})
    if call is not None:
        em.text("Counting.")
        em.tool_call(call[:4], name="countdown", tool_call_id="toolu_c", new=True)
        em.tool_call(call[4:])
        em.stop(None, "tool_call")
    else:
        em.text(text)
        em.stop(None, "stop")
    return Route(chunks=list(encode(em.drain(), "anthropic")))


@asynccontextmanager
async def served(respond: Any) -> AsyncIterator[str]:
    """The chat app (its Agent's tools from the MCP server) on uvicorn; yields its URL."""
    turns = [turn(call='{"n": 3}'), turn(text="Counted to three.")]
    async with ReplayServer({"/v1/messages": turns}) as upstream:

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            with open("/dev/null", "w") as quiet:
                async with mcp_stdio(MCP_SERVER, errlog=quiet) as tools, \
                        httpx.AsyncClient(timeout=30) as client:
                    provider = make_provider("anthropic", base_url=upstream.url,
                                             api_key="k", model="claude-test")
                    app.state.agent = Agent(provider, tools, http_sender(client))
                    yield

        async def chat(request: Request) -> Response:
            return respond(agent_run(request.app.state.agent, "Count to three."))

        app = Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])], lifespan=lifespan)
        with serve_sync(app) as base:
            yield f"{base}/chat"


async def body_of(respond: Any) -> str:
    async with served(respond) as url, httpx.AsyncClient(timeout=60) as client:
        response = await client.post(url, json={})
    assert response.status_code == 200
    return response.text


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the server runs in uvicorn's thread; the client side is plain httpx


async def test_the_real_clients_fold_the_whole_run(node_clients: Path, tmp_path: Path) -> None:
    case = {"name": "run", "vercel": await body_of(ui_message_stream_response),
            "vercelLatest": await body_of(lambda run: ui_message_stream_response(run, ai_sdk=6)),
            "agui": await body_of(ag_ui_response)}
    file = tmp_path / "cases.json"
    file.write_text(json.dumps([case]))
    done = subprocess.run([shutil.which("node") or "node", "check.mjs", str(file)],
                          cwd=node_clients, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (verdict,) = json.loads(done.stdout)
    for client in ("vercel", "vercelLatest"):
        got = verdict[client]
        assert got["schemaErrors"] == [] and got["streamErrors"] == []
        types = got["types"]
        assert types.count("start-step") == 2 and types[-1] == "finish"
        assert types.index("tool-input-start") < types.index("tool-input-delta") \
            < types.index("tool-input-available") < types.index("tool-output-available")
        assert types.count("tool-output-available") == 4  # 3 progress reports, the result
        parts = got["message"]["parts"]
        (tool,) = [p for p in parts if p["type"] == "tool-countdown"]
        assert tool["state"] == "output-available" and not tool.get("preliminary")
        assert tool["input"] == {"n": 3}
        assert tool["output"] == {"result": "counted 3"}
        assert parts[-1] == {"type": "text", "text": "Counted to three.", "state": "done"}
    progress = [json.loads(p.removeprefix("data: ")) for p in case["vercel"].split("\n\n")
                if '"preliminary":true' in p]
    assert [p["output"]["message"] for p in progress] == [f"step {i} of 3" for i in (1, 2, 3)]
    agui = verdict["agui"]
    assert agui["schemaErrors"] == [] and agui["verifyError"] is None
    for kind in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"):
        assert kind in agui["types"]
    assert agui["types"].count("ACTIVITY_SNAPSHOT") == 3
    assert agui["types"].count("STEP_STARTED") == 2
