"""The sans-IO half of tools: schemas from type hints, the registry, results and progress
reports (re-exported by :mod:`streamflow.app.tools`, which runs the calls)."""

from ._progress import Progress as Progress
from ._progress import ToolCallContext as ToolCallContext
from ._progress import current_call as current_call
from ._registry import ToolRegistry as ToolRegistry
from ._result import DENIED as DENIED
from ._result import ToolContent as ToolContent
from ._result import ToolResult as ToolResult
from ._result import denial as denial
from ._result import error_result as error_result
from ._result import prepare_call as prepare_call
from ._result import to_text as to_text
from ._schema import Tool as Tool
from ._schema import tool_from_function as tool_from_function
