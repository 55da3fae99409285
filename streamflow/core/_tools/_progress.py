"""What a running tool can report: :class:`Progress`, and the call it runs for.

A tool written as an async generator yields ``Progress`` reports while it works and
its result last::

    @tools.tool
    async def index(path: str) -> AsyncIterator[Progress | dict]:
        '''Index a folder.'''
        for n, name in enumerate(files, 1):
            yield Progress(f"indexed {name}", {"done": n, "total": len(files)})
        yield {"files": len(files)}

Each report is an ``AgentEvent(type="tool.progress")`` of the run; the last value that
is not a ``Progress`` is the tool's result. While a call runs, :func:`current_call`
gives its :class:`ToolCallContext` (the call, and where a run started inside it --
a sub-agent, see :func:`~streamflow.app.tools.agent_tool` -- sends its events and usage).
Sans-IO: nothing here runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..events import ToolCallItem, Usage


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress report of a running tool: a message for people, ``data`` for programs."""

    message: str | None
    data: Any = None


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """The call a tool is running for, as the dispatcher hands it to the tool's task.

    ``forward(event)`` passes an ``AgentEvent`` of a run started inside the call into
    the run that made the call (tagged with this call's id there); ``add_usage(usage)``
    adds a nested run's tokens to that run's total.
    """

    call: ToolCallItem
    forward: Callable[[Any], Awaitable[None]]
    add_usage: Callable[[Usage], None]


_CURRENT: ContextVar[ToolCallContext | None] = ContextVar("streamflow_tool_call", default=None)


def current_call() -> ToolCallContext | None:
    """The :class:`ToolCallContext` of the tool call running in this task (``None`` outside
    one, or when the dispatcher runs without an agent run)."""
    return _CURRENT.get()


def set_current_call(context: ToolCallContext | None) -> Any:
    """Make ``context`` the current call of this task; returns the token to reset it."""
    return _CURRENT.set(context)


def reset_current_call(token: Any) -> None:
    """Undo :func:`set_current_call`."""
    _CURRENT.reset(token)
