"""The MCP server examples/mcp_tools.py starts: one tool that reports its progress.

Written with the official ``mcp`` SDK's ``MCPServer``; it speaks MCP on stdin/stdout
(``python examples/mcp_forecast_server.py``), or over streamable HTTP with
``server.run("streamable-http")``.
"""

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("forecasts", log_level="WARNING")


@server.tool()
async def get_forecast(city: str, ctx: Context) -> dict[str, Any]:
    """Tomorrow's forecast for a city."""
    await ctx.report_progress(1, 2, f"asking the weather service about {city}")
    await ctx.report_progress(2, 2, "got it")
    return {"city": city, "high_c": 24, "conditions": "sunny"}


if __name__ == "__main__":
    server.run("stdio")
