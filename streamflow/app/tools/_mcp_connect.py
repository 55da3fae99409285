"""MCP tools: the tools of a Model Context Protocol server as a :class:`ToolRegistry`.

Needs the ``mcp`` extra (``pip install 'streamflow-llm[mcp]'``: the official ``mcp`` SDK
and ``jsonschema``), imported when first used::

    params = StdioServerParameters(command="uvx", args=["mcp-server-time"])
    async with mcp_stdio(params) as tools:            # or mcp_http("http://127.0.0.1:8000/mcp")
        agent = Agent(provider, tools, send)
        result = await agent.run("What time is it in Lisbon?")

    tools = await from_mcp(session)                   # an initialized ClientSession of yours

How a tool is checked and called: :mod:`streamflow.app.tools._mcp_tool`; what its result
becomes: :mod:`streamflow.app.tools._mcp_result`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, TextIO

from pydantic import BaseModel

from ...core._json_schema import checked_schema
from ...core._tools._progress import Progress
from ...core._tools._registry import ToolRegistry
from ...core.errors import SchemaRefusedError
from ._mcp_tool import MCPTool, ProgressHook, require_mcp, tool_name


def mcp_tool(session: Any, spec: Any, *, name: str | None = None,
             on_progress: ProgressHook | None = None, timeout: float | None = None,
             read_timeout: float | None = None) -> MCPTool:
    """One server tool (an ``mcp.types.Tool`` from ``list_tools``) as an :class:`MCPTool`.

    Raises :class:`~streamflow.core.errors.SchemaRefusedError` for an input schema refused
    (a reference outside it, past the size or depth limits: ``_json_schema``).
    """
    schema = dict(spec.input_schema or {"type": "object", "properties": {}})
    registered = name or tool_name(spec.name)
    annotations = spec.annotations.model_dump(exclude_none=True) if spec.annotations else {}
    holder: dict[str, MCPTool] = {}

    def call_mcp_tool(**arguments: Any) -> AsyncIterator[Any]:
        return holder["tool"].stream(arguments, Progress)

    tool = MCPTool(
        name=registered, description=spec.description or spec.title or "",
        func=call_mcp_tool, parameters=schema, model=BaseModel, is_async=True,
        timeout=timeout, session=session, server_name=spec.name,
        validator=checked_schema(schema, name=registered), on_progress=on_progress,
        read_timeout=read_timeout,
        annotations=annotations)
    holder["tool"] = tool
    return tool


async def from_mcp(session: Any, *, prefix: str = "", registry: ToolRegistry | None = None,
                   on_progress: ProgressHook | None = None, timeout: float | None = None,
                   read_timeout: float | None = None) -> ToolRegistry:
    """Every tool of an initialized ``ClientSession`` (all pages of ``tools/list``).

    They are added to ``registry`` (a new one by default), named ``prefix + name``.
    A tool whose input schema is refused raises
    :class:`~streamflow.core.errors.SchemaRefusedError` naming it (docs/mcp.md, "Schema
    references"), before any of its calls.
    """
    require_mcp()
    from mcp.types import PaginatedRequestParams

    registry = registry if registry is not None else ToolRegistry()
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        for spec in listing.tools:
            registry.add(mcp_tool(session, spec, name=tool_name(spec.name, prefix),
                                  on_progress=on_progress, timeout=timeout,
                                  read_timeout=read_timeout))
        cursor = listing.next_cursor
        if not cursor:
            return registry


@asynccontextmanager
async def mcp_stdio(server: Any, *, errlog: TextIO | None = None, prefix: str = "",
                    on_progress: ProgressHook | None = None, timeout: float | None = None,
                    read_timeout: float | None = None,
                    **session_options: Any) -> AsyncIterator[ToolRegistry]:
    """Start the MCP server ``server`` (``StdioServerParameters``) and yield its tools.

    The server runs as a subprocess speaking MCP on its stdin/stdout (its stderr goes
    to ``errlog``, default ``sys.stderr``) until the block ends. ``session_options``
    go to ``ClientSession`` (``client_info``, ``sampling_callback``...). A tool whose
    input schema is refused raises :class:`~streamflow.core.errors.SchemaRefusedError` as
    itself (not in an ``ExceptionGroup``), once the server is stopped.
    """
    require_mcp()
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    refused: SchemaRefusedError | None = None
    async with stdio_client(server, errlog=errlog or sys.stderr) as (read, write), \
            ClientSession(read, write, **session_options) as session:
        await session.initialize()
        try:
            tools = await from_mcp(session, prefix=prefix, on_progress=on_progress,
                                   timeout=timeout, read_timeout=read_timeout)
        except SchemaRefusedError as exc:  # the SDK's task group would wrap it
            refused = exc
        else:
            yield tools
    if refused is not None:
        raise refused


@asynccontextmanager
async def mcp_http(url: str, *, headers: Mapping[str, str] | None = None,
                   http_client: Any = None, prefix: str = "",
                   on_progress: ProgressHook | None = None, timeout: float | None = None,
                   read_timeout: float | None = None,
                   **session_options: Any) -> AsyncIterator[ToolRegistry]:
    """Connect to the MCP server at ``url`` (streamable HTTP) and yield its tools.

    ``headers`` are sent with every request (authorization...); or pass a configured
    ``http_client`` (the ``httpx2.AsyncClient`` the SDK uses). The session is closed
    (an HTTP ``DELETE``) when the block ends. A refused input schema raises
    :class:`~streamflow.core.errors.SchemaRefusedError` as itself, as for :func:`mcp_stdio`.
    """
    require_mcp()
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    client = http_client
    if client is None:
        client = httpx2.AsyncClient(headers=dict(headers or {}),
                                    timeout=httpx2.Timeout(30.0, read=300.0))
    elif headers:
        client.headers.update(headers)
    refused: SchemaRefusedError | None = None
    try:
        async with streamable_http_client(url, http_client=client) as (read, write), \
                ClientSession(read, write, **session_options) as session:
            await session.initialize()
            try:
                tools = await from_mcp(session, prefix=prefix, on_progress=on_progress,
                                       timeout=timeout, read_timeout=read_timeout)
            except SchemaRefusedError as exc:  # the SDK's task group would wrap it
                refused = exc
            else:
                yield tools
    finally:
        if http_client is None:
            await client.aclose()
    if refused is not None:
        raise refused
