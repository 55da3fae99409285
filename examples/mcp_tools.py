"""An Agent whose tools come from an MCP server: start it, list its tools, let the model call one.

``mcp_stdio`` starts the server (here ``mcp_forecast_server.py`` beside this file, an
``MCPServer`` of the official ``mcp`` SDK) and yields its tools as a
``ToolRegistry``: schemas from the server's tool list, arguments checked against them,
results back to the model in the provider's format, progress notifications as the run's
``tool.progress`` events. Runs offline: a loopback replay server plays the model's two turns
(``python examples/mcp_tools.py``; needs ``pip install 'streamflow-llm[mcp]'``). For an
HTTP server, ``mcp_http("http://127.0.0.1:8000/mcp")`` works the same way.
"""

import sys
from pathlib import Path

import anyio
import httpx

import streamflow
from streamflow.app.agent import http_sender
from streamflow.app.providers import AnthropicProvider
from streamflow.app.tools import mcp_stdio
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects.base import Emitter


def model_turn(*, call: str | None = None, text: str = "") -> Route:
    """One recorded turn of the model, as the Anthropic API streams it."""
    em = Emitter()
    em.note({"id": "msg_demo", "model": "claude-demo"})
    if call is not None:
        em.tool_call(call, name="get_forecast", tool_call_id="toolu_1")
        em.stop(None, "tool_call")
    else:
        em.text(text)
        em.stop(None, "stop")
    return Route(chunks=list(streamflow.encode(em.drain(), "anthropic")))


async def main() -> None:
    from mcp import StdioServerParameters

    script = Path(__file__).with_name("mcp_forecast_server.py")
    server = StdioServerParameters(command=sys.executable, args=[str(script)])
    turns = [model_turn(call='{"city": "Lisbon"}'),
             model_turn(text="Tomorrow in Lisbon: sunny, up to 24 °C.")]
    async with mcp_stdio(server) as tools, \
            ReplayServer({"/v1/messages": turns}) as replay, \
            httpx.AsyncClient(timeout=None) as client:
        print(f"[mcp] tools: {tools.names}")
        provider = AnthropicProvider(base_url=replay.url, api_key="offline", model="claude-demo")
        agent = streamflow.Agent(provider, tools, http_sender(client))
        async with agent.stream("What's the weather in Lisbon tomorrow?") as run:
            async for ev in run:
                if ev.type == "tool.progress" and ev.progress is not None:
                    done = ev.progress.data["progress"]
                    print(f"[progress] {ev.progress.message} ({done:g}/2)")
        result = run.result
    (tool_result,) = result.turns[0].results
    print(f"[mcp] {tool_result.name} -> {tool_result.content}")
    print(f"[agent] {len(result.turns)} turns: {result.text!r}")


if __name__ == "__main__":
    anyio.run(main)
