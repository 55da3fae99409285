"""The web responses of an answer whose first endpoint dies mid-answer, read by the real
AI SDK (``readUIMessageStream``) and AG-UI (``verifyEvents``) clients: one message, the
sentence once and whole, one tool call -- never the cut one's pieces -- for a plain
answer through a failover chain and for an Agent run whose turns go through one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from failover_model import BASE, FINAL, PATHS, TEXT, THINKING, Model
from security.hostile import serve_sync
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as HTTPRoute

from streamflow import Agent, Failover
from streamflow.app.providers import provider_class
from streamflow.app.tools import ToolRegistry
from streamflow.servers.replay import ReplayServer
from streamflow.servers.web import ag_ui_response, agent_run, ui_message_stream_response

pytestmark = pytest.mark.anyio
ARGS = {"city": "Paris", "unit": "celsius"}


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """The weather of a city."""
    return {"temperature": 18, "conditions": "sunny", "city": city, "unit": unit}


def chain_of(one: str, two: str) -> Failover:
    return Failover([provider_class("anthropic")(base_url=one, api_key="k", model="m"),
                     provider_class("openai-chat")(base_url=two + BASE["openai-chat"],
                                                   api_key="k", model="m")], tries=1)


async def body_of(respond: Callable[[Failover], Response], fault: str) -> bytes:
    """The web response's body for an answer whose first endpoint has ``fault``."""
    async with ReplayServer({PATHS["anthropic"]: Model("anthropic", [fault])}) as one, \
            ReplayServer({PATHS["openai-chat"]: Model("openai-chat", [None, None])}) as two:
        async def chat(request: Request) -> Response:
            return respond(chain_of(one.url, two.url))

        app = Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])])
        with serve_sync(app) as url:
            async with httpx.AsyncClient(timeout=30) as client:
                response = await client.post(url + "/chat")
    assert response.status_code == 200
    return response.content


RESPONSES: dict[str, Callable[[Failover], Response]] = {
    "answer": lambda chain: ui_message_stream_response(chain.source("weather?")),
    "agent": lambda chain: ui_message_stream_response(
        agent_run(Agent(chain, ToolRegistry([get_weather])), "weather?")),
}
AGUI: dict[str, Callable[[Failover], Response]] = {
    "answer": lambda chain: ag_ui_response(chain.source("weather?"), thread_id="t",
                                           run_id="r"),
    "agent": lambda chain: ag_ui_response(
        agent_run(Agent(chain, ToolRegistry([get_weather])), "weather?"), thread_id="t",
        run_id="r"),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def verdicts(node_clients: Path, tmp_path_factory: pytest.TempPathFactory
                   ) -> dict[str, Any]:
    """Each case's bodies and the Node clients' verdict on them, by case name."""
    cases = []
    for fault in ("cut-args", "cut-text", "cut-thinking"):
        for kind in RESPONSES:
            cases.append({"name": f"{kind}/{fault}",
                          "vercel": (await body_of(RESPONSES[kind], fault)).decode(),
                          "agui": (await body_of(AGUI[kind], fault)).decode()})
    file = tmp_path_factory.mktemp("failover") / "cases.json"
    file.write_text(json.dumps(cases))
    done = subprocess.run([shutil.which("node") or "node", "check.mjs", str(file)],
                          cwd=node_clients, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return {r["name"]: r for r in json.loads(done.stdout)}


@pytest.mark.parametrize("fault", ["cut-args", "cut-text", "cut-thinking"])
@pytest.mark.parametrize("kind", sorted(RESPONSES))
async def test_the_ai_sdk_folds_one_message_from_a_continued_answer(
        verdicts: dict[str, Any], kind: str, fault: str) -> None:
    verdict = verdicts[f"{kind}/{fault}"]["vercel"]
    assert verdict["schemaErrors"] == [] and verdict["streamErrors"] == []
    parts = [p for p in verdict["message"]["parts"] if p["type"] != "step-start"]
    assert [(p["type"], p.get("text")) for p in parts[:2]] == [("reasoning", THINKING),
                                                               ("text", TEXT)]
    tools = [p for p in parts if p["type"].startswith("tool-")]
    assert len(tools) == 1 and tools[0]["input"] == ARGS
    if kind == "agent":
        assert tools[0]["state"] == "output-available" and tools[0]["output"]["temperature"] == 18
        assert parts[-1] == {"type": "text", "text": FINAL, "state": "done"} or \
            parts[-1]["text"] == FINAL


@pytest.mark.parametrize("fault", ["cut-args", "cut-text", "cut-thinking"])
@pytest.mark.parametrize("kind", sorted(AGUI))
async def test_ag_ui_verifies_a_continued_answer(verdicts: dict[str, Any], kind: str,
                                                 fault: str) -> None:
    verdict = verdicts[f"{kind}/{fault}"]["agui"]
    assert verdict["schemaErrors"] == [] and verdict["verifyError"] is None
    assert verdict["types"].count("TOOL_CALL_START") == 1
    assert verdict["types"][-1] == "RUN_FINISHED"
