"""Compose a pipeline in code: HTTP body -> UniEvents -> sinks, one request, one message.

Runs offline against the loopback replay server (``python examples/compose_pipeline.py``).
"""

import anyio
import httpx
from _body import BODY

import streamflow
from streamflow.reactive.operators import pipeline, tap_usage
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route


async def main(url: str) -> None:
    async with httpx.AsyncClient() as client:
        request = client.build_request("POST", url, json={"model": "claude-demo", "stream": True})
        events = from_httpx(client, request).pipe(
            pipeline("anthropic"),
            tap_usage(lambda usage: print(f"\n[usage] {usage.response_tokens} tokens out")),
        )
        message = await streamflow.run(events, print_text)  # one request, any number of sinks
        print(f"[message] {message.finish_reason}: {message.tool_calls[0].arguments}")


def print_text(event: streamflow.UniEvent) -> None:
    """A sink can be a plain callable: it gets every UniEvent."""
    if event.event_type == "delta" and event.content_items[0].type == "text.delta":
        print(event.content_items[0].text, end="", flush=True)


async def demo() -> None:
    async with ReplayServer(Route.from_body(BODY, delays=0.005)) as server:
        await main(server.url + "/v1/messages")


if __name__ == "__main__":
    anyio.run(demo)
