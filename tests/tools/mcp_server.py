"""A real MCP server for the tests, written with the SDK's own ``MCPServer``.

Run as a script it serves over stdio (``python tests/tools/mcp_server.py``);
:func:`build` gives the server for the streamable-HTTP tests (its
``streamable_http_app()`` under uvicorn on loopback).

``python tests/tools/mcp_server.py --schemas FILE`` serves, instead, one tool per entry
of the JSON object in ``FILE`` (a name -> the ``inputSchema`` it lists, hostile or not:
tests/tools/test_schema_refs.py). Each such tool answers with the arguments it got, as
JSON text, so a test sees whether a call reached the server.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from pydantic import BaseModel, Field

# one red pixel, as PNG
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
    "53de0000000c4944415408d763f8cfc0000003010100c9fe92ef0000000049454e44ae426082")


class Forecast(BaseModel):
    city: str
    temperature_c: float
    conditions: str


def build() -> MCPServer:
    """The test server: weather (structured), echo (text), countdown (progress),
    fail (a tool error) and pixel (an image)."""
    server = MCPServer("streamflow-test", log_level="WARNING")

    @server.tool()
    def get_forecast(city: Annotated[str, Field(description="A city name")],
                     days: int = 1) -> Forecast:
        """The weather forecast for a city."""
        return Forecast(city=city, temperature_c=21.5 + days, conditions="sunny")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    @server.tool()
    async def countdown(n: int, ctx: Context) -> str:
        """Count down from n, reporting progress at each step."""
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1} of {n}")
        return f"counted {n}"

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the reason given."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def pixel() -> Image:
        """A one-pixel PNG image."""
        return Image(data=PIXEL, format="png")

    return server


def build_with_schemas(schemas: dict[str, Any]) -> MCPServer:
    """A server listing one tool per ``schemas`` entry, with that ``inputSchema`` as it is
    (the SDK would derive it from the function: it is replaced after registration)."""
    server = MCPServer("streamflow-test-schemas", log_level="WARNING")
    for name, schema in schemas.items():
        def take(x: Any = None, n: Any = None) -> str:
            return json.dumps({"x": x, "n": n})

        server.add_tool(take, name=name, description=f"A tool listing the {name} schema.",
                        structured_output=False)
        tool = server._tool_manager.get_tool(name)
        assert tool is not None
        tool.parameters = schema
    return server


@contextmanager
def serve_http() -> Iterator[str]:
    """The server's streamable-HTTP app under uvicorn on a free loopback port (in a thread
    with its own loop); yields the endpoint URL (``http://127.0.0.1:<port>/mcp``)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # factory: the app is built in uvicorn's own loop (it makes anyio objects there)
    config = uvicorn.Config(lambda: build().streamable_http_app(), factory=True,
                            log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--schemas"]:
        build_with_schemas(json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))).run("stdio")
    else:
        build().run("stdio")
