"""A per-block UI: one pane per content group (thinking, text, each tool call).

``group_by_block()`` emits a Block observable per group; a pane subscribes to its
block only. Blocks replay their items, so the "late" pane attached after the
stream ended still shows everything. Runs offline on the replay server.
"""

import anyio
import httpx
from _body import BODY

import streamflow
from streamflow.operators import Block, group_by_block, pipeline
from streamflow.server import ReplayServer, Route
from streamflow.sinks import BaseSink
from streamflow.sources import from_httpx


class Panes(BaseSink):
    """A toy UI: prints each block's fragments under its own header."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def on_next(self, block: Block) -> None:
        self.blocks.append(block)
        label = f"[{block.index}:{block.kind}]"
        block.subscribe(lambda item: print(f"{label} {item.type:<16} {_show(item)}"))


def _show(item: object) -> str:
    for field in ("text", "thinking", "arguments"):
        if hasattr(item, field):
            return repr(getattr(item, field))
    return ""


async def main() -> None:
    panes = Panes()
    async with ReplayServer(Route.from_body(BODY, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        events = from_httpx(client, request).pipe(pipeline("anthropic"))
        async with streamflow.scope():   # async sources pump inside a scope
            events.pipe(group_by_block()).subscribe(panes)
    late: list[str] = []
    panes.blocks[2].subscribe(lambda item: late.append(item.type))
    print(f"late pane on block 2 replayed: {late}")


if __name__ == "__main__":
    anyio.run(main)
