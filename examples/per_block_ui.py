"""A per-block UI: one pane per content group (thinking, text, each tool call), then the message.

``s.blocks()`` gives one async iterator of items per group. A pane shows what a
reader wants to see: reasoning and answer text as they grow (a thinking group's
last fragment carries only its signature, an empty string: nothing to show), a
tool call's name at once and its parsed arguments when the call is complete.
After the blocks, ``s.message`` is the assembled message -- no second subscription
needed. Runs offline on the replay server. (In a reactive pipeline the same split
is the ``group_by_block()`` operator, one replaying observable per group.)
"""

import anyio
import httpx
from _body import BODY

import streamflow
from streamflow.app.streaming import BlockStream
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route


async def show(block: BlockStream) -> None:
    """Draw one pane: a header, then the block's visible content."""
    if isinstance(block.head, streamflow.ToolCallItem):
        print(f"[{block.index}] tool call {block.head.name} ({block.head.tool_call_id})")
    else:
        print(f"[{block.index}] {block.kind}")
    async for item in block:
        if isinstance(item, streamflow.ToolCallItem):
            if item.type == "tool_call.done":
                print(f"    arguments: {item.parsed_arguments}")
        elif isinstance(item, (streamflow.TextItem, streamflow.ThinkingItem)):
            fragment = item.text if isinstance(item, streamflow.TextItem) else item.thinking
            if item.type.endswith(".delta") and fragment:  # skip empty fragments
                print(f"    {fragment!r}")


async def main() -> None:
    async with ReplayServer(Route.from_body(BODY, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        async with streamflow.stream(from_httpx(client, request)) as s:
            async for block in s.blocks():
                await show(block)
    message = s.message
    print(f"message: {message.finish_reason}, {len(message.items)} blocks, "
          f"{message.usage.response_tokens if message.usage else '?'} tokens out")


if __name__ == "__main__":
    anyio.run(main)
