"""An Agent run as one stream: turns, tool progress, a sub-agent and a human approval.

The lead agent hands research to a sub-agent (``agent_tool``) whose tool reports its
progress (an async generator yielding ``Progress``), and wants to book a table, which
needs a person's approval: the run ends pending, its state goes through JSON (as it
would cross to the next request), a fresh Agent resumes it with the approval, and the
run goes on to its answer. Every event of the lead and of the sub-agent (tagged with
its call's id and depth) comes out of one ``async for``. Runs offline
(``python examples/agent_stream.py``): a loopback replay server plays the models.
"""

import json
from collections.abc import AsyncIterator

import anyio
import httpx

from streamflow.app.agent import Agent, AgentEvent, AgentResult, http_sender
from streamflow.app.providers import AnthropicProvider
from streamflow.app.tools import Progress, ToolRegistry, agent_tool
from streamflow.core.events import Usage
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects.base import Emitter
from streamflow.wire.encoding import encode

research_tools = ToolRegistry()
lead_tools = ToolRegistry()


@research_tools.tool
async def search_reviews(city: str) -> AsyncIterator[Progress | dict]:
    """Search restaurant reviews in a city."""
    for page in (1, 2):
        await anyio.sleep(0.01)  # stands in for a real API call
        yield Progress(f"read review page {page} of 2", {"page": page})
    yield {"best": "Casa Lisboa", "rating": 4.8}


@lead_tools.tool(needs_approval=True)
def book_table(restaurant: str, time: str) -> str:
    """Book a table (a person approves first)."""
    return f"booked {restaurant} at {time}"


def model_turn(*calls: tuple[str, str, dict], text: str = "") -> Route:
    """One recorded model turn: some text, then tool calls."""
    em = Emitter()
    em.note({"id": "msg_demo", "model": "claude-demo"})
    if text:
        em.text(text)
    for name, call_id, arguments in calls:
        em.tool_call(json.dumps(arguments), name=name, tool_call_id=call_id, new=True)
    em.stop(Usage(prompt_tokens=40, response_tokens=12), "tool_call" if calls else "stop")
    return Route(chunks=list(encode(em.drain(), "anthropic")))


ROUTES = {
    "/v1/messages": [
        model_turn(("research", "toolu_research", {"task": "Best restaurant in Lisbon?"}),
                   text="Let me find a place."),
        model_turn(("book_table", "toolu_book", {"restaurant": "Casa Lisboa", "time": "20:00"})),
        model_turn(text="Booked: Casa Lisboa at 20:00."),
    ],
    "/research/v1/messages": [
        model_turn(("search_reviews", "toolu_reviews", {"city": "Lisbon"})),
        model_turn(text="Casa Lisboa (4.8)."),
    ],
}


def show(ev: AgentEvent) -> None:
    """One line per event worth a line (text deltas and the like are left out)."""
    pad = "  " * ev.depth + ("[research] " if ev.depth else "")
    item = ev.event.item if ev.event is not None else None
    if ev.type == "turn.start":
        print(f"{pad}[turn {ev.turn}]")
    elif item is not None and item.type == "text.done":
        print(f"{pad}text: {item.text!r}")
    elif ev.type == "tool.start" and ev.call is not None:
        print(f"{pad}tool {ev.call.name}({ev.call.arguments})")
    elif ev.type == "tool.progress" and ev.progress is not None:
        print(f"{pad}progress: {ev.progress.message}")
    elif ev.type == "tool.result" and ev.result is not None:
        print(f"{pad}-> {ev.result.content}")  # type: ignore[union-attr]
    elif ev.type == "approval.request" and ev.call is not None:
        print(f"{pad}approval needed: {ev.call.name}({ev.call.arguments})")
    elif ev.type == "run.end":
        print(f"{pad}[run end]")


async def main() -> None:
    async with ReplayServer(ROUTES) as server, httpx.AsyncClient(timeout=None) as client:
        def agent(path: str, tools: ToolRegistry) -> Agent:
            provider = AnthropicProvider(base_url=server.url + path, api_key="offline",
                                         model="claude-demo")
            return Agent(provider, tools, http_sender(client))

        researcher = agent("/research", research_tools)
        lead_tools.add(agent_tool(researcher, name="research",
                                  description="Research a question in depth."))

        async with agent("", lead_tools).stream("Book me the best table in Lisbon.") as run:
            async for ev in run:
                show(ev)
        pending = run.result
        print(f"[pending] {[c.name for c in pending.pending]}")

        state = json.dumps(pending.to_state())  # e.g. into the page, back with the answer
        restored = AgentResult.from_state(json.loads(state))
        decisions = {call.tool_call_id: True for call in restored.pending}  # the person: yes
        async with agent("", lead_tools).resume(restored, decisions) as run:
            async for ev in run:
                show(ev)
    result = run.result
    print(f"[agent] {result.turn_count} turns: {result.text!r}")
    print(f"[agent] {result.usage.prompt_tokens} tokens in, with the sub-agent's")


if __name__ == "__main__":
    anyio.run(main)
