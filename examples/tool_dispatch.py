"""Tool dispatch on one request: a typed registry validates each call, then runs it.

``ToolDispatchSink`` is an AsyncSink: the UI sink renders text on the hot path while
the tools run in their own task. Every call is checked against the tool's schema
(from its type hints) before the function runs, so a bad call from the model comes
back as a structured error it can fix -- never as a ``TypeError`` in your code.
Runs offline against the loopback replay server.
"""

from typing import Any, Literal

import anyio
import httpx
from _body import BODY

import streamflow
from streamflow import ToolCallItem
from streamflow.app.tools import ToolRegistry, prepare_call
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route

tools = ToolRegistry()


@tools.tool
async def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius"
                      ) -> dict[str, Any]:
    """Current weather for a city."""
    await anyio.sleep(0.01)  # stands in for a real API call
    return {"city": city, "temperature": 21, "unit": unit}


def print_text(event: streamflow.UniEvent) -> None:
    item = event.item
    if isinstance(item, streamflow.TextItem) and item.type == "text.delta":
        print(item.text, end="", flush=True)


async def main() -> None:
    dispatch = streamflow.ToolDispatchSink(tools, timeout=5)  # validates, then runs each call
    async with ReplayServer(Route.from_body(BODY)) as server, httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        message = await streamflow.run(from_httpx(client, request), print_text, dispatch)
    print()
    for call, result in zip(message.tool_calls, dispatch.results, strict=True):
        print(f"[tools] {call.name}({call.parsed_arguments}) -> {result.content}")

    # A call the model got wrong: the registry says what is wrong, the tool never runs.
    bad = ToolCallItem("tool_call.done", name="get_weather", tool_call_id="toolu_bad",
                       arguments={"city": "Paris", "unit": "kelvin"})
    checked = prepare_call(tools, bad)
    if isinstance(checked, streamflow.app.tools.ToolResult):
        print(f"[invalid] {checked.content['message']}: {checked.content['errors'][0]['msg']}")


if __name__ == "__main__":
    anyio.run(main)
