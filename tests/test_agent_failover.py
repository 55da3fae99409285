"""An Agent whose turns go through a failover chain: a turn cut in its tool call's
arguments is continued at the next endpoint, the tool runs once, the run goes on.

The endpoints are loopback servers (:mod:`failover_model`) answering in their own
dialects: the sentence and a ``get_weather`` call, then, once the request carries the
tool's result, the final answer.
"""

from __future__ import annotations

from typing import Any

import pytest
from failover_model import BASE, FINAL, PATHS, TEXT, Model

from streamflow import Agent, Endpoint, Failover, UniEvent
from streamflow.app.providers import provider_class
from streamflow.app.tools import ToolRegistry
from streamflow.servers.replay import ReplayServer

pytestmark = pytest.mark.anyio


def provider(dialect: str, url: str) -> Any:
    return provider_class(dialect)(base_url=url + BASE[dialect], api_key="k", model="m")


def tools(ran: list[dict[str, Any]]) -> ToolRegistry:
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        """The weather of a city."""
        ran.append({"city": city, "unit": unit})
        return {"temperature": 18, "conditions": "sunny"}
    return ToolRegistry([get_weather])


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("fault", ["cut-args", "cut-text", "529"])
async def test_a_turn_cut_mid_answer_goes_on_and_the_tool_runs_once(fault: str,
                                                                    eager: bool) -> None:
    primary, fallback = Model("anthropic", [fault]), Model("openai-chat", [None, None])
    async with ReplayServer({PATHS["anthropic"]: primary}) as one, \
            ReplayServer({PATHS["openai-chat"]: fallback}) as two:
        chain = Failover([provider("anthropic", one.url), provider("openai-chat", two.url)],
                         tries=1)
        ran: list[dict[str, Any]] = []
        agent = Agent(chain, tools(ran), eager=eager)
        events: list[Any] = []
        async with agent.stream("What's the weather in Paris?") as run:
            async for event in run:
                events.append(event)
        result = run.result
    assert ran == [{"city": "Paris", "unit": "celsius"}]  # once, whole
    assert result.text == FINAL
    first = result.turns[0].message
    assert first.text == TEXT and len(first.tool_calls) == 1
    assert [a["outcome"] for a in first.delivery["attempts"]] == \
        (["failed", "stop"] if fault == "529" else ["cut", "stop"])  # type: ignore[index]
    # the run's events never show the dropped fragments: one call opened in turn 1
    opened = [e.event for e in events if e.type == "event" and e.turn == 1
              and isinstance(e.event, UniEvent) and e.event.content_items
              and e.event.content_items[0].type == "tool_call.delta"
              and e.event.content_items[0].name]
    assert len(opened) == 1
    # turn 2 went to the first endpoint again: its circuit is closed after one failure
    assert len(one.hits) == 2 and len(two.hits) == 1


async def test_fallbacks_by_model_string_and_the_requests_each_endpoint_writes() -> None:
    primary = Model("gemini", ["cut-text", "cut-text"])  # its two tries cut: then the next
    fallback = Model("openai-responses", [None, None])
    async with ReplayServer({PATHS["gemini"]: primary}) as one, \
            ReplayServer({PATHS["openai-responses"]: fallback}) as two:
        agent = Agent(provider("gemini", one.url), tools([]),
                      fallbacks=[Endpoint.of(provider("openai-responses", two.url))])
        assert agent.failover is not None and agent.provider.dialect == "gemini"
        result = await agent.run("What's the weather in Paris?")
    assert result.text == FINAL
    assert one.hits[0].path.startswith("/v1beta/models/m:streamGenerateContent")
    assert two.hits[0].path == "/v1/responses"
    assert primary.asked[1][0] == "instruction"  # its second try went on from the first's
    mode, kept = fallback.asked[0]
    assert mode == "instruction" and kept and TEXT.startswith(kept)
    assert len(kept) > len(primary.asked[1][1] or "")  # and the fallback from both


def test_an_agent_needs_a_provider_to_write_with() -> None:
    chain = Failover([Endpoint("anthropic", lambda chat: None)])  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        Agent(chain)
