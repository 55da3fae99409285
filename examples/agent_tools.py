"""An Agent with a typed tool: stream a turn, run the tool it asked for, stream the answer.

``ToolRegistry`` builds the tool's JSON schema from its type hints and validates the
model's arguments before the function runs; ``Agent`` loops stream -> tools -> next
turn and hands the results back in the provider's own format; ``RenderSink`` draws
every turn, the tool results included. Runs offline: a loopback replay server plays
two recorded turns (``python examples/agent_tools.py``); point ``base_url`` at the
real API (and pass ``api_key``) to talk to a model.
"""

from typing import Literal

import anyio
import httpx
from _body import ANSWER, BODY

import streamflow
from streamflow.app.agent import http_sender
from streamflow.app.providers import AnthropicProvider
from streamflow.servers.replay import ReplayServer, Route

tools = streamflow.ToolRegistry()


@tools.tool
async def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit of the answer.
    """
    await anyio.sleep(0.01)  # stands in for a real API call
    return {"city": city, "temperature": 21 if unit == "celsius" else 70, "unit": unit}


async def main() -> None:
    turns = [Route.from_body(BODY), Route.from_body(ANSWER)]  # one per request, in order
    async with ReplayServer({"/v1/messages": turns}) as server, \
            httpx.AsyncClient(timeout=None) as client:
        provider = AnthropicProvider(base_url=server.url, api_key="offline", model="claude-demo")
        agent = streamflow.Agent(provider, tools, http_sender(client),
                                 sinks=[streamflow.RenderSink()])
        result = await agent.run("What's the weather in Paris?")
    usage = result.usage
    print(f"[agent] {len(result.turns)} turns: {result.text!r}")
    print(f"[agent] {usage.prompt_tokens} tokens in, {usage.response_tokens} out in total")
    print(f"[agent] tool results: {[r.content for r in result.turns[0].results]}")


if __name__ == "__main__":
    anyio.run(main)
