"""Tools: typed Python functions the model can call (schema, registry, results).

The sans-IO half lives here (schemas from type hints, validation, result shapes):
:class:`ToolRegistry` holds the tools, :func:`prepare_call` validates one call.
Running the calls is :class:`streamflow.ToolDispatchSink` (the sink ``run()`` feeds;
``streamflow.app.tools.dispatch.ToolDispatcher`` is the runner it uses), and
:class:`streamflow.Agent` loops stream -> tools -> next turn. A tool may be an async
generator yielding :class:`Progress` reports before its result, may need a person's
approval (``needs_approval``), or may run another Agent (:func:`agent_tool`).

The tools of a Model Context Protocol server are a registry too (the ``mcp`` extra):
``async with mcp_stdio(StdioServerParameters(...)) as tools:`` (or :func:`mcp_http` for
streamable HTTP, :func:`from_mcp` for a ``ClientSession`` of yours). Each is an
:class:`MCPTool` checked against its ``inputSchema`` with ``jsonschema``; its result is
:func:`result_value` of the server's answer, and an ``isError`` answer raises
:class:`MCPToolError`, which the model sees as a tool error.
"""

from __future__ import annotations

from ...core._tools._progress import Progress, ToolCallContext, current_call
from ...core._tools._registry import ToolRegistry
from ...core._tools._result import ToolContent, ToolResult, error_result, prepare_call, to_text
from ...core._tools._schema import Tool, tool_from_function
from ._agent_tool import SubAgentPending, agent_tool
from ._mcp_connect import from_mcp, mcp_http, mcp_stdio
from ._mcp_result import MCPToolError, result_value
from ._mcp_tool import MCPTool, ProgressHook

__all__ = ["MCPTool", "MCPToolError", "Progress", "ProgressHook", "SubAgentPending", "Tool",
           "ToolCallContext", "ToolContent", "ToolRegistry", "ToolResult", "agent_tool",
           "current_call", "error_result", "from_mcp", "mcp_http", "mcp_stdio", "prepare_call",
           "result_value", "to_text", "tool_from_function"]
