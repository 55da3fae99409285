"""MCP tools: the tools of a Model Context Protocol server as a :class:`ToolRegistry`.

Needs the ``mcp`` extra (``pip install 'streamflow-llm[mcp]'``: the official ``mcp`` SDK
and ``jsonschema``), imported when first used::

    params = StdioServerParameters(command="uvx", args=["mcp-server-time"])
    async with mcp_stdio(params) as tools:            # or mcp_http("http://127.0.0.1:8000/mcp")
        agent = Agent(provider, tools, send)
        result = await agent.run("What time is it in Lisbon?")

    tools = await ToolRegistry.from_mcp(session)      # an initialized ClientSession of yours

Each server tool becomes a :class:`MCPTool`: its ``inputSchema`` is the tool's
``parameters`` (sent to the model as it is), and the arguments are checked against it
with ``jsonschema`` before the call, so a wrong call is the same ``ValidationError``
result (pydantic's error shape: ``loc``, ``msg``, ``type``, ``input``) a Python tool
gives; a schema ``jsonschema`` cannot read is left to the server. Names a provider would
refuse (``[A-Za-z0-9_-]{1,64}``) are rewritten (``.``, ``/`` and the like become ``_``;
``prefix`` is put in front), the server is called with its own name.

The result goes back to the model as the server gave it: ``structuredContent`` as the
JSON value; text blocks as text; images and audio as a :class:`ToolContent` (the
provider sends the image itself where its API takes images in tool results); an
embedded resource as its text (or as data); a resource link as its URI. A result with
``isError`` raises :class:`MCPToolError`, so the dispatcher sends the model a tool
error (``{"error": "MCPToolError", "message": <the server's text>}``); an MCP
protocol error (unknown tool, a broken connection) is a tool error too.

Progress: an MCP tool runs as an async generator tool (:meth:`MCPTool.stream`): each
MCP progress notification (``progress``, ``total``, ``message``) is a
``streamflow.tools.Progress(message, {"progress", "total"})`` -- in an Agent run a
``tool.progress`` event, in the browser preliminary output -- and the result comes
last. The ``on_progress`` hook sees each report too, as ``(message, data)``.
"""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from .._extras import install_line
from ..events import InlineDataItem, TextItem
from .progress import Progress
from .registry import ToolRegistry
from .result import ToolContent
from .schema import Tool

__all__ = ["MCPTool", "MCPToolError", "ProgressHook", "from_mcp", "mcp_http", "mcp_stdio",
           "result_value"]

ProgressHook = Callable[[str | None, dict[str, Any]], Awaitable[None] | None]
"""Called with ``(message, {"progress": float, "total": float | None})`` per notification."""

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class MCPToolError(Exception):
    """The server answered the call with ``isError``: the message is its text."""


def _require_mcp() -> Any:
    try:
        import mcp
    except ImportError:
        raise ImportError(f"MCP tools need the mcp extra: {install_line('mcp')}") from None
    return mcp


def _validator(schema: Mapping[str, Any]) -> Any:
    """A ``jsonschema`` validator of ``schema`` (``None`` when it is not a valid schema)."""
    try:
        import jsonschema
    except ImportError:
        raise ImportError(f"MCP tools need the mcp extra: {install_line('mcp')} "
                          "(jsonschema)") from None
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None  # the server validates what we cannot
    return cls(schema)


def tool_name(name: str, prefix: str = "") -> str:
    """A name providers accept: ``prefix + name`` with other characters as ``_``, 64 at most."""
    return _BAD_CHARS.sub("_", f"{prefix}{name}")[:64] or "_"


@dataclass(frozen=True, slots=True)
class MCPTool(Tool):
    """A tool of an MCP server: validated with ``jsonschema``, run by ``session.call_tool``.

    ``server_name`` is the name the server knows it by; ``on_progress`` receives its
    progress notifications; ``read_timeout`` (seconds) bounds one call's wait for an
    answer on the MCP session (``timeout`` is the dispatcher's, as for any tool).
    """

    session: Any = None
    server_name: str = ""
    validator: Any = None
    on_progress: ProgressHook | None = None
    read_timeout: float | None = None
    annotations: dict[str, Any] = field(default_factory=dict)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` as they are, once the input schema accepts them.

        Raises :class:`pydantic.ValidationError` with one entry per schema violation.
        """
        if self.validator is None:
            return dict(arguments)
        errors = sorted(self.validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            details = [InitErrorDetails(
                type=PydanticCustomError(f"json_schema_{e.validator}", "{reason}",
                                         {"reason": e.message}),
                loc=tuple(e.absolute_path), input=e.instance) for e in errors]
            raise ValidationError.from_exception_data(f"{self.name}_arguments", details)
        return dict(arguments)

    async def call(self, arguments: dict[str, Any],
                   on_progress: ProgressHook | None = None) -> Any:
        """Call the tool on the server; the result value (see the module doc).

        ``on_progress`` (default: the tool's own hook) gets each progress notification.
        Raises :class:`MCPToolError` for an ``isError`` result or an MCP error.
        """
        hook = on_progress or self.on_progress
        mcp = _require_mcp()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            if hook is not None:
                awaited = hook(message, {"progress": value, "total": total})
                if awaited is not None:
                    await awaited

        try:
            result = await self.session.call_tool(
                self.server_name, arguments, read_timeout_seconds=self.read_timeout,
                progress_callback=progress if hook is not None else None)
        except mcp.MCPError as exc:
            raise MCPToolError(str(exc)) from exc
        return result_value(result)


    async def stream(self, arguments: dict[str, Any],
                     progress: Callable[[str | None, dict[str, Any]], Any]) -> AsyncIterator[Any]:
        """Call the tool; yield ``progress(message, data)`` per notification as it arrives
        (the tool's ``on_progress`` hook sees it too), then the result value (the
        async-generator form of a tool).

        The SDK runs each progress callback as a task of its own, so the result may come
        first: the callbacks already due get their turn before the result is yielded,
        and a report that comes later still is dropped (the call is over).
        """
        import math

        import anyio
        import anyio.lowlevel

        send, receive = anyio.create_memory_object_stream[Any](math.inf)
        outcome: dict[str, Any] = {}

        async def report(message: str | None, data: dict[str, Any]) -> None:
            try:
                send.send_nowait(progress(message, data))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            if self.on_progress is not None:
                awaited = self.on_progress(message, data)
                if awaited is not None:
                    await awaited

        async def call() -> None:
            async with send:
                try:
                    outcome["value"] = await self.call(arguments, on_progress=report)
                except Exception as exc:  # raised below, in the consumer's task
                    outcome["error"] = exc
                for _ in range(3):
                    await anyio.lowlevel.checkpoint()  # the callbacks already spawned

        async with anyio.create_task_group() as tg, receive:
            tg.start_soon(call)
            async for item in receive:
                yield item
        if "error" in outcome:
            raise outcome["error"]
        yield outcome["value"]


def _part(block: Any) -> TextItem | InlineDataItem:
    """One MCP content block as a text or data part."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return TextItem("text.done", block.text)
    if kind in ("image", "audio"):
        return InlineDataItem("inline_data.done", base64.b64decode(block.data), block.mime_type)
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return TextItem("text.done", text, provider={"uri": str(resource.uri)})
        return InlineDataItem("inline_data.done", base64.b64decode(resource.blob),
                              resource.mime_type or "", provider={"uri": str(resource.uri)})
    if kind == "resource_link":
        return TextItem("text.done", f"{block.name}: {block.uri}",
                        provider={"uri": str(block.uri)})
    dump = block.model_dump(mode="json") if isinstance(block, BaseModel) else block
    return TextItem("text.done", str(dump))


def result_value(result: Any) -> Any:
    """A ``CallToolResult`` as the value a tool returns (see the module doc).

    Raises :class:`MCPToolError` when the result has ``isError``.
    """
    parts = [_part(b) for b in result.content]
    if result.is_error:
        text = "\n".join(p.text for p in parts if isinstance(p, TextItem))
        raise MCPToolError(text or "the tool failed")
    media = any(isinstance(p, InlineDataItem) for p in parts)
    if media:
        return ToolContent(tuple(parts), result.structured_content)
    if result.structured_content is not None:
        return result.structured_content
    texts = [p.text for p in parts if isinstance(p, TextItem)]
    return texts[0] if len(texts) == 1 else "\n".join(texts)


def mcp_tool(session: Any, spec: Any, *, name: str | None = None,
             on_progress: ProgressHook | None = None, timeout: float | None = None,
             read_timeout: float | None = None) -> MCPTool:
    """One server tool (an ``mcp.types.Tool`` from ``list_tools``) as an :class:`MCPTool`."""
    schema = dict(spec.input_schema or {"type": "object", "properties": {}})
    annotations = spec.annotations.model_dump(exclude_none=True) if spec.annotations else {}
    holder: dict[str, MCPTool] = {}

    def call_mcp_tool(**arguments: Any) -> AsyncIterator[Any]:
        return holder["tool"].stream(arguments, Progress)

    tool = MCPTool(
        name=name or tool_name(spec.name), description=spec.description or spec.title or "",
        func=call_mcp_tool, parameters=schema, model=BaseModel, is_async=True,
        timeout=timeout, session=session, server_name=spec.name, validator=_validator(schema),
        on_progress=on_progress, read_timeout=read_timeout, annotations=annotations)
    holder["tool"] = tool
    return tool


async def from_mcp(session: Any, *, prefix: str = "", registry: ToolRegistry | None = None,
                   on_progress: ProgressHook | None = None, timeout: float | None = None,
                   read_timeout: float | None = None) -> ToolRegistry:
    """Every tool of an initialized ``ClientSession`` (all pages of ``tools/list``).

    They are added to ``registry`` (a new one by default), named ``prefix + name``.
    """
    _require_mcp()
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
    go to ``ClientSession`` (``client_info``, ``sampling_callback``...).
    """
    _require_mcp()
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(server, errlog=errlog or sys.stderr) as (read, write), \
            ClientSession(read, write, **session_options) as session:
        await session.initialize()
        yield await from_mcp(session, prefix=prefix, on_progress=on_progress, timeout=timeout,
                             read_timeout=read_timeout)


@asynccontextmanager
async def mcp_http(url: str, *, headers: Mapping[str, str] | None = None,
                   http_client: Any = None, prefix: str = "",
                   on_progress: ProgressHook | None = None, timeout: float | None = None,
                   read_timeout: float | None = None,
                   **session_options: Any) -> AsyncIterator[ToolRegistry]:
    """Connect to the MCP server at ``url`` (streamable HTTP) and yield its tools.

    ``headers`` are sent with every request (authorization...); or pass a configured
    ``http_client`` (the ``httpx2.AsyncClient`` the SDK uses). The session is closed
    (an HTTP ``DELETE``) when the block ends.
    """
    _require_mcp()
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    client = http_client
    if client is None:
        client = httpx2.AsyncClient(headers=dict(headers or {}),
                                    timeout=httpx2.Timeout(30.0, read=300.0))
    elif headers:
        client.headers.update(headers)
    try:
        async with streamable_http_client(url, http_client=client) as (read, write), \
                ClientSession(read, write, **session_options) as session:
            await session.initialize()
            yield await from_mcp(session, prefix=prefix, on_progress=on_progress,
                                 timeout=timeout, read_timeout=read_timeout)
    finally:
        if http_client is None:
            await client.aclose()
