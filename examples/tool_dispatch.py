"""A tool-dispatch subscriber stub: an AsyncSink that runs each finished tool call.

The UI sink renders text on the hot path while the tool sink awaits the tool in
its own task, fed through a bounded buffer (``policy="wait"``: backpressure).
Both hang off ONE request through ``streamflow.run``. Runs offline.
"""

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
from _body import BODY

import streamflow
from streamflow.server import ReplayServer, Route
from streamflow.sinks import AsyncSink
from streamflow.sources import from_httpx


async def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    await anyio.sleep(0.01)  # stands in for a real API call
    return {"city": city, "temperature": 21, "unit": unit}


class ToolDispatcher(AsyncSink):
    """Runs ``tool_call.done`` items against a registry; collects results by call id."""

    buffer = 16
    policy = "wait"

    def __init__(self, tools: dict[str, Callable[..., Awaitable[Any]]]) -> None:
        self.tools = tools
        self.results: dict[str, Any] = {}

    async def on_event(self, event: Any) -> None:
        item = getattr(event, "item", None)
        if item is not None and item.type == "tool_call.done":
            print(f"[tools] calling {item.name}({item.arguments})")
            self.results[item.tool_call_id] = await self.tools[item.name](**item.arguments)

    async def on_end(self, error: BaseException | None) -> None:
        print(f"[tools] done, {len(self.results)} result(s), error={error!r}")


async def main() -> None:
    dispatcher = ToolDispatcher({"get_weather": get_weather})
    async with ReplayServer(Route.from_body(BODY)) as server, httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        message = await streamflow.run(from_httpx(client, request), dispatcher)
    for call in message.tool_calls:
        print(f"[result] {call.tool_call_id} -> {dispatcher.results[call.tool_call_id]}")


if __name__ == "__main__":
    anyio.run(main)
