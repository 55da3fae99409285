"""Tools: typed Python functions the model can call (schema, registry, results).

The sans-IO half lives here (schemas from type hints, validation, result shapes);
running the calls concurrently is :class:`streamflow.sinks.tools.ToolDispatcher`.
"""

from __future__ import annotations

from .registry import ToolRegistry
from .result import ToolResult, error_result, prepare_call, to_text
from .schema import Tool, tool_from_function

__all__ = ["Tool", "ToolRegistry", "ToolResult", "error_result", "prepare_call", "to_text",
           "tool_from_function"]
