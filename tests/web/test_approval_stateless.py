"""Approval from the history alone (``agent_answer``): one instance streams the run up to a
call waiting for approval, the real AI SDK (``ai`` 7, ``readUIMessageStream``) folds it into
the UIMessage a browser holds, the person's answer is set on it as
``addToolApprovalResponse`` sets it, and *another* instance with a fresh Agent, nothing kept
between the requests, goes on from that message: the approved call runs once (a denied one
not at all, the model told why), the model gets its result, the answer streams.
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
from test_agent_approval_web import payloads, turn

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.core.errors import RequestError
from streamflow.servers.replay import ReplayServer
from streamflow.servers.web import (
    Answer,
    agent_answer,
    from_ui_messages,
    to_ui_message,
    ui_message_stream_response,
)

pytestmark = pytest.mark.anyio
ASK = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Clean up /tmp/old."}]}


def instance(upstream_url: str, client: httpx.AsyncClient, deleted: list[str],
             finished: list[Answer] | None = None) -> Starlette:
    """One app instance: its own Agent and tools, answering from the posted history only
    (each answer's ``on_finish`` appended to ``finished``)."""
    tools = ToolRegistry()

    @tools.tool(needs_approval=True)
    def delete_files(path: str) -> str:
        """Delete a folder."""
        deleted.append(path)
        return f"deleted {path}"

    provider = make_provider("anthropic", base_url=upstream_url, api_key="k", model="m")
    agent = Agent(provider, tools, http_sender(client))

    async def chat(request: Request) -> Response:
        body = await request.json()
        def on_finish(answer: Answer, *, status: str) -> None:
            if finished is not None:
                finished.append(answer)

        last = body["messages"][-1]  # a new answer gets an id; one that goes on keeps its own
        named = None if last["role"] == "assistant" else f"{last['id']}-answer"
        return ui_message_stream_response(agent_answer(agent, body["messages"]),
                                          on_finish=on_finish, message_id=named)

    return Starlette(routes=[HTTPRoute("/api/chat", chat, methods=["POST"])])


def folded(node_clients: Path, tmp_path: Path, body: str) -> dict[str, Any]:
    """The UIMessage the current AI SDK folds ``body`` into (what the browser holds)."""
    file = tmp_path / "cases.json"
    file.write_text(json.dumps([{"name": "run", "vercel": body, "vercelLatest": body,
                                 "agui": ""}]))
    done = subprocess.run([shutil.which("node") or "node", "check.mjs", str(file)],
                          cwd=node_clients, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    verdict = json.loads(done.stdout)[0]["vercelLatest"]
    assert verdict["schemaErrors"] == [] and verdict["streamErrors"] == []
    return dict(verdict["message"])


def answered(message: dict[str, Any], approved: bool, reason: str | None = None
             ) -> dict[str, Any]:
    """``message`` with the waiting call answered, as ``addToolApprovalResponse`` does."""
    parts = []
    for part in message["parts"]:
        if part.get("state") == "approval-requested":
            approval = {**part["approval"], "approved": approved}
            if reason:
                approval["reason"] = reason
            part = {**part, "state": "approval-responded", "approval": approval}
        parts.append(part)
    return {**message, "parts": parts}


@pytest.mark.parametrize("approved", [True, False])
async def test_another_instance_goes_on_from_the_history_alone(
        node_clients: Path, tmp_path: Path, approved: bool) -> None:
    deleted: list[str] = []
    finished: list[Answer] = []
    async with ReplayServer({"/v1/messages": [turn(call=True), turn(call=False)]}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        first = instance(upstream.url, client, deleted)
        other = instance(upstream.url, client, deleted, finished)  # nothing shared
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=first),
                                     base_url="http://a") as a, \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=other),
                                  base_url="http://b") as b:
            asking = (await a.post("/api/chat", json={"messages": [ASK]})).text
            assert deleted == []  # waiting for the person
            held = folded(node_clients, tmp_path, asking)
            history = [ASK, answered(held, approved, None if approved else "not today")]
            going_on = (await b.post("/api/chat", json={"messages": history})).text
        sent = upstream.hits[-1].json()["messages"]
    assert deleted == (["/tmp/old"] if approved else [])  # once, and only if approved
    (result,) = [b for m in sent if m["role"] == "user" and isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result"]
    assert result["tool_use_id"] == "toolu_d"
    text = json.dumps(result)
    assert ("deleted /tmp/old" in text) if approved else ("ApprovalDenied" in text
                                                           and "not today" in text)
    chunks = payloads(going_on)
    kinds = [c["type"] if isinstance(c, dict) else c for c in chunks]
    assert kinds.count("tool-output-available" if approved else "tool-output-denied") == 1
    assert "Deleted." in "".join(c.get("delta", "") for c in chunks if isinstance(c, dict))
    assert kinds[-1] == "finish"
    assert held["id"] == "u1-answer" == chunks[0]["messageId"]  # the same message goes on
    # what on_finish stores is the message the browser holds now: the held one, its call
    # answered as the AI SDK shows it, then the new step
    (answer,) = finished
    stored = to_ui_message(answer)
    assert stored["id"] == held["id"] and stored["parts"][0] == held["parts"][0]
    (call,) = [p for p in stored["parts"] if p.get("toolCallId") == "toolu_d"]
    if approved:
        assert call["state"] == "output-available" and call["output"] == "deleted /tmp/old"
    else:
        assert call["state"] == "output-denied"
        assert call["approval"] == {"id": "toolu_d", "approved": False, "reason": "not today"}
    assert stored["parts"][-1] == {"type": "text", "text": "Deleted.", "state": "done"}
    again = from_ui_messages([ASK, stored])  # and it reads back as the model's conversation
    assert [t.role for t in again] == ["user", "assistant", "user", "assistant"]


async def test_a_history_without_answers_is_a_new_run_and_an_unanswered_ask_is_refused(
        ) -> None:
    tools = ToolRegistry()
    agent = Agent(make_provider("anthropic", api_key="k", model="m"), tools)
    plain = agent_answer(agent, [ASK])
    assert plain.resumed is None and plain.prompt  # a new run on the history
    asked = {"id": "a1", "role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "tool-delete_files", "toolCallId": "toolu_d", "state": "approval-requested",
         "input": {"path": "/tmp/old"}, "approval": {"id": "toolu_d"}}]}
    assert agent_answer(agent, [ASK, asked]).resumed is None  # nobody answered yet: asks again
    both = {**asked, "parts": [*asked["parts"], {
        "type": "tool-delete_files", "toolCallId": "toolu_e", "state": "approval-responded",
        "input": {"path": "/tmp/new"}, "approval": {"id": "toolu_e", "approved": True}}]}
    with pytest.raises(RequestError, match="toolu_d"):
        agent_answer(agent, [ASK, both])  # one answered, one not: nothing may run yet
