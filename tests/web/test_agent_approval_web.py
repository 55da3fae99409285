"""A call that needs a person's approval, in the browser: the run's UI message shows it
waiting (AI SDK 6+ ``tool-approval-request``, AG-UI's interrupt outcome), and the answer
the client sends back (``approval-responded`` parts, read by ``approvals()``) resumes the
run with ``agent_resume`` as a second UI message.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as HTTPRoute

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import (
    ag_ui_response,
    agent_resume,
    agent_run,
    approvals,
    ui_message_stream_response,
)
from streamflow.wire.dialects._emitter import Emitter
from streamflow.wire.encoding import encode

pytestmark = pytest.mark.anyio



def turn(*, call: bool) -> Route:
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test"})
    if call:
        em.tool_call('{"path": "/tmp/old"}', name="delete_files", tool_call_id="toolu_d")
        em.stop(None, "tool_call")
    else:
        em.text("Deleted.")
        em.stop(None, "stop")
    return Route(chunks=list(encode(em.drain(), "anthropic")))


def payloads(body: str) -> list[Any]:
    out = []
    for event in body.split("\n\n"):
        for line in event.split("\n"):
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line.removeprefix("data: ")))
    return out


async def test_approval_requested_then_resumed(node_clients: Path, tmp_path: Path) -> None:
    deleted: list[str] = []
    tools = ToolRegistry()

    @tools.tool(needs_approval=True)
    def delete_files(path: str) -> str:
        """Delete a folder."""
        deleted.append(path)
        return f"deleted {path}"

    pending: dict[str, Any] = {}
    # requests in order: the run kept for its state, the two UI runs, the resumed run
    turns = [turn(call=True)] * 3 + [turn(call=False)]
    async with ReplayServer({"/v1/messages": turns}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=upstream.url, api_key="k", model="m")
        agent = Agent(provider, tools, http_sender(client))

        async def chat(request: Request) -> Response:
            body = await request.json()
            if body.get("to") == "ag-ui":
                return ag_ui_response(agent_run(agent, "Clean up /tmp/old."))
            if "messages" in body:  # the client's answer: go on
                return ui_message_stream_response(
                    agent_resume(agent, pending["result"], approvals(body["messages"])),
                    ai_sdk=6)
            run = agent_run(agent, "Clean up /tmp/old.")
            return ui_message_stream_response(run, ai_sdk=6)

        app = Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://app") as http:
            async with agent.stream("Clean up /tmp/old.") as run:  # the same run, for its state
                async for _ in run:
                    pass
            pending["result"] = run.result
            assert [c.tool_call_id for c in run.result.pending] == ["toolu_d"]
            first = (await http.post("/chat", json={})).text
            agui = (await http.post("/chat", json={"to": "ag-ui"})).text
            answer = [{"role": "assistant", "parts": [
                {"type": "tool-delete_files", "toolCallId": "toolu_d",
                 "state": "approval-responded", "input": {"path": "/tmp/old"},
                 "approval": {"id": "toolu_d", "approved": True}}]}]
            assert approvals(answer) == {"toolu_d": True}
            second = (await http.post("/chat", json={"messages": answer})).text
    assert deleted == ["/tmp/old"]  # run only once approved
    file = tmp_path / "cases.json"
    file.write_text(json.dumps([{"name": "first", "vercel": first, "vercelLatest": first,
                                 "agui": agui},
                                {"name": "second", "vercel": second, "vercelLatest": second,
                                 "agui": agui}]))
    done = subprocess.run([shutil.which("node") or "node", "check.mjs", str(file)],
                          cwd=node_clients, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    one, two = json.loads(done.stdout)
    got = one["vercelLatest"]
    assert got["schemaErrors"] == [] and got["streamErrors"] == []
    (part,) = [p for p in got["message"]["parts"] if p["type"] == "tool-delete_files"]
    assert part["state"] == "approval-requested" and part["approval"] == {"id": "toolu_d"}
    assert [p["type"] for p in payloads(second)].count("tool-output-available") == 1
    assert two["vercelLatest"]["schemaErrors"] == []
    assert one["agui"]["schemaErrors"] == [] and one["agui"]["verifyError"] is None
    finished = payloads(agui)[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"]["interrupts"][0]["toolCallId"] == "toolu_d"
