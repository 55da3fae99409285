"""Human approval: a call of a ``needs_approval`` tool ends the run pending; ``resume``
runs it or sends the denial back as a tool error; the state crosses JSON into a fresh
Agent. Against the replay server (the model's two turns)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from agent_turns import turn

from streamflow.app.agent import Agent, AgentResult, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.servers.replay import ReplayServer

pytestmark = pytest.mark.anyio

CALLS = (("get_weather", "toolu_1", {"city": "Lisbon"}),
         ("delete_file", "toolu_2", {"path": "/tmp/notes.txt"}))


def approval_tools(ran: list[str]) -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        ran.append("get_weather")
        return {"city": city, "temperature": 17}

    @tools.tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append("delete_file")
        return f"deleted {path}"

    @tools.tool(needs_approval=lambda args: args.get("amount", 0) > 100)
    def transfer(amount: int) -> str:
        """Move money."""
        ran.append(f"transfer {amount}")
        return "done"

    return tools


@asynccontextmanager
async def served(*turns: Any, eager: bool = False
                 ) -> AsyncIterator[tuple[ReplayServer, Any, list[str]]]:
    """The replay server and a factory of fresh Agents (sharing the ``ran`` log)."""
    ran: list[str] = []
    async with ReplayServer({"/v1/messages": list(turns)}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        def agent() -> Agent:
            provider = make_provider("anthropic", base_url=server.url, api_key="k", model="m")
            return Agent(provider, approval_tools(ran), http_sender(client), eager=eager)

        yield server, agent, ran


@pytest.mark.parametrize("eager", [False, True])
async def test_a_call_needing_approval_ends_the_run_pending(eager: bool) -> None:
    async with served(turn(*CALLS, tokens=10), eager=eager) as (server, agent, ran):
        async with agent().stream("Weather, then delete my notes.") as run:
            events = [ev async for ev in run]
        hits = len(server.hits)
    kinds = [ev.type for ev in events if ev.type != "event"]
    assert kinds == ["turn.start", "tool.start", "tool.result", "approval.request", "run.end"]
    (asked,) = [ev for ev in events if ev.type == "approval.request"]
    assert asked.call is not None and asked.call.tool_call_id == "toolu_2"
    assert asked.call.arguments == {"path": "/tmp/notes.txt"}
    result = run.result
    assert [c.tool_call_id for c in result.pending] == ["toolu_2"]
    assert [r.tool_call_id for r in result.held_results] == ["toolu_1"]
    assert ran == ["get_weather"] and hits == 1  # the held call did not run, no next turn
    assert result.messages[-1].role == "assistant"  # ends with the calls, no results yet


async def test_an_approved_call_runs_and_the_run_goes_on() -> None:
    async with served(turn(*CALLS), turn(text="Done.")) as (server, agent, ran):
        bot = agent()
        first = await bot.run("Weather, then delete my notes.")
        async with bot.resume(first, {"toolu_2": True}) as run:
            events = [ev async for ev in run]
        sent = server.hits[1].json()["messages"]
    kinds = [ev.type for ev in events if ev.type != "event"]
    assert kinds == ["tool.start", "tool.result", "turn.start", "run.end"]
    assert [ev.turn for ev in events if ev.type == "turn.start"] == [2]
    assert ran == ["get_weather", "delete_file"]
    blocks = sent[-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["toolu_1", "toolu_2"]  # call order
    assert blocks[1]["content"] == "deleted /tmp/notes.txt" and blocks[1]["is_error"] is False
    result = run.result
    assert result.text == "Done." and result.pending == []
    assert len(result.turns) == 2 and len(result.turns[0].results) == 2


@pytest.mark.parametrize(("decision", "reason"),
                         [(False, "the user denied this call"), ("not that file", "not that file")])
async def test_a_denied_call_goes_to_the_model_as_a_tool_error(decision: Any,
                                                               reason: str) -> None:
    async with served(turn(*CALLS), turn(text="Understood.")) as (server, agent, ran):
        bot = agent()
        first = await bot.run("Weather, then delete my notes.")
        result = await bot.run_resumed(first, {"toolu_2": decision})
        sent = server.hits[1].json()["messages"][-1]["content"]
    assert ran == ["get_weather"]  # never ran
    assert sent[1]["is_error"] is True
    assert json.loads(sent[1]["content"]) == {"error": "ApprovalDenied", "message": reason}
    assert result.turns[0].results[1].is_error and result.text == "Understood."


async def test_the_state_crosses_json_into_a_fresh_agent() -> None:
    async with served(turn(*CALLS, tokens=10), turn(text="Done.", tokens=30)) as (
            server, agent, _ran):
        first = await agent().run("Weather, then delete my notes.")
        wire = json.dumps(first.to_state())
        restored = AgentResult.from_state(json.loads(wire))
        assert restored.pending[0].arguments == {"path": "/tmp/notes.txt"}
        async with agent().resume(restored, {"toolu_2": True}) as run:  # another instance
            kinds = [ev.type async for ev in run]
        sent = server.hits[1].json()["messages"]
    assert kinds[0] == "tool.start" and kinds[-1] == "run.end"
    assert [b["tool_use_id"] for b in sent[-1]["content"]] == ["toolu_1", "toolu_2"]
    assert restored.messages == first.messages  # the neutral turns cross JSON as they are
    # the same conversation went on, as the provider writes it
    assert sent[:-1] == agent().provider.request(first.messages).json["messages"]
    result = run.result
    assert result.text == "Done."
    assert result.usage.prompt_tokens == 40  # the first turn's usage came along
    assert result.turn_count == 2


async def test_a_predicate_decides_per_call() -> None:
    calls = (("transfer", "toolu_a", {"amount": 50}), ("transfer", "toolu_b", {"amount": 500}))
    async with served(turn(*calls), turn(text="Sent.")) as (_, agent, ran):
        result = await agent().run("Pay both.")
    assert ran == ["transfer 50"]
    assert [c.tool_call_id for c in result.pending] == ["toolu_b"]


async def test_decisions_must_answer_exactly_the_waiting_calls() -> None:
    async with served(turn(*CALLS), turn(text="Done.")) as (_, agent, _ran):
        bot = agent()
        first = await bot.run("?")
        with pytest.raises(ValueError, match="no decision"):
            bot.resume(first, {})
        with pytest.raises(ValueError, match="toolu_9"):
            bot.resume(first, {"toolu_2": True, "toolu_9": True})
        with pytest.raises(TypeError):
            bot.resume(first, {"toolu_2": 1})  # type: ignore[dict-item]
        done = await bot.run_resumed(first, {"toolu_2": True})
        with pytest.raises(ValueError, match="no call waiting"):
            bot.resume(done, {})
