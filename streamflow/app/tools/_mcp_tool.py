"""An MCP server's tool as a streamflow :class:`~streamflow.app.tools.Tool`: checked, called,
streamed.

Each server tool becomes a :class:`MCPTool`: its ``inputSchema`` is the tool's
``parameters`` (sent to the model as it is), and the arguments are checked against it
with ``jsonschema`` before the call, so a wrong call is the same ``ValidationError``
result (pydantic's error shape: ``loc``, ``msg``, ``type``, ``input``) a Python tool
gives; a schema ``jsonschema`` cannot read is left to the server. The schema is checked
once, when the tool is listed, by :func:`streamflow.core._json_schema.checked_schema`: a
reference outside it (``http(s)://``, ``file://``, ``other.json``...) or a schema past
the size and depth limits is a :class:`~streamflow.core.errors.SchemaRefusedError` naming the
tool, and nothing is ever fetched; a check that fails at call time (a recursive schema
passing its bounds...) is a ``ValidationError`` result too, never an exception. Names a
provider would refuse (``[A-Za-z0-9_-]{1,64}``) are rewritten by :func:`tool_name` (``.``,
``/`` and the like become ``_``; ``prefix`` is put in front); the server is called with
its own name.

Progress: an MCP tool runs as an async generator tool (:meth:`MCPTool.stream`): each
MCP progress notification (``progress``, ``total``, ``message``) is a
``streamflow.app.tools.Progress(message, {"progress", "total"})`` -- in an Agent run a
``tool.progress`` event, in the browser preliminary output -- and the result comes
last. The ``on_progress`` hook sees each report too, as ``(message, data)``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..._extras import install_line
from ...core._json_schema import CheckedSchema, SchemaProblem, problems
from ...core._tools._schema import Tool
from ._mcp_result import MCPToolError, result_value

ProgressHook = Callable[[str | None, dict[str, Any]], Awaitable[None] | None]
"""Called with ``(message, {"progress": float, "total": float | None})`` per notification."""

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def require_mcp() -> Any:
    """The ``mcp`` package (an ImportError naming the extra when it is missing)."""
    try:
        import mcp
    except ImportError:
        raise ImportError(f"MCP tools need the mcp extra: {install_line('mcp')}") from None
    return mcp


def tool_name(name: str, prefix: str = "") -> str:
    """A name providers accept: ``prefix + name`` with other characters as ``_``, 64 at most."""
    return _BAD_CHARS.sub("_", f"{prefix}{name}")[:64] or "_"


@dataclass(frozen=True, slots=True)
class MCPTool(Tool):
    """A tool of an MCP server: validated with ``jsonschema``, run by ``session.call_tool``.

    ``validator`` is the checked input schema (``checked_schema``; ``None``: nothing is
    checked here, the server decides; a ``jsonschema`` validator of yours works too).
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

        Raises :class:`pydantic.ValidationError` with one entry per schema violation
        (``type`` ``json_schema_<keyword>``); a check that could not finish (a reference
        that does not resolve, a recursive schema past its bounds) is one entry too
        (``json_schema_unresolvable``, ``json_schema_too_complex``, ``json_schema_error``).
        """
        if self.validator is None:
            return dict(arguments)
        found: list[SchemaProblem] = (
            self.validator.problems(arguments) if isinstance(self.validator, CheckedSchema)
            else problems(self.validator, arguments))
        if found:
            details = [InitErrorDetails(
                type=PydanticCustomError(f"json_schema_{p.keyword}", "{reason}",
                                         {"reason": p.message}),
                loc=p.path, input=p.instance) for p in found]
            raise ValidationError.from_exception_data(f"{self.name}_arguments", details)
        return dict(arguments)

    async def call(self, arguments: dict[str, Any],
                   on_progress: ProgressHook | None = None) -> Any:
        """Call the tool on the server; the result value (see the module doc).

        ``on_progress`` (default: the tool's own hook) gets each progress notification.
        Raises :class:`MCPToolError` for an ``isError`` result or an MCP error.
        """
        hook = on_progress or self.on_progress
        mcp = require_mcp()

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
