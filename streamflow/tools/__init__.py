"""Tools: typed Python functions the model can call (schema, registry, results).

The sans-IO half lives here (schemas from type hints, validation, result shapes):
:class:`ToolRegistry` holds the tools, :func:`prepare_call` validates one call.
Running the calls is :class:`streamflow.ToolDispatchSink` (the sink ``run()`` feeds;
``streamflow.sinks.tools.ToolDispatcher`` is the runner it uses), and
:class:`streamflow.Agent` loops stream -> tools -> next turn. A tool may be an async
generator yielding :class:`Progress` reports before its result, may need a person's
approval (``needs_approval``), or may run another Agent (:func:`agent_tool`).
"""

from __future__ import annotations

from .agent_tool import SubAgentPending, agent_tool
from .mcp import MCPTool, MCPToolError, mcp_http, mcp_stdio
from .progress import Progress, ToolCallContext, current_call
from .registry import ToolRegistry
from .result import ToolContent, ToolResult, error_result, prepare_call, to_text
from .schema import Tool, tool_from_function

__all__ = ["MCPTool", "MCPToolError", "Progress", "SubAgentPending", "Tool", "ToolCallContext",
           "ToolContent", "ToolRegistry", "ToolResult", "agent_tool", "current_call",
           "error_result", "mcp_http", "mcp_stdio", "prepare_call", "to_text",
           "tool_from_function"]
