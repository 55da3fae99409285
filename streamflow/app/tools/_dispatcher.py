"""Running tool calls: concurrently, each under a timeout, one result per call.

:class:`ToolDispatcher` runs :class:`~streamflow.core.events.ToolCallItem` calls against a
:class:`~streamflow.app.tools.ToolRegistry`: each call is looked up and validated
(:func:`~streamflow.app.tools.prepare_call`), then run in an anyio task group under a
:class:`anyio.CapacityLimiter` (``max_concurrency``) and a per-call timeout (the
tool's own ``timeout`` or the dispatcher's). Sync functions run in a worker thread;
``async def`` functions in the task. An async generator tool's
:class:`~streamflow.app.tools.Progress` reports go to ``on_progress`` as they come, and its
last other value is its result. :class:`CallHooks` is what an agent run hooks in. The
sink that feeds the dispatcher is :class:`~streamflow.app.tools.dispatch.ToolDispatchSink`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio

from ...core._tools._progress import Progress, ToolCallContext, reset_current_call, set_current_call
from ...core.events import ToolCallItem
from . import ToolRegistry, ToolResult, error_result, prepare_call

ResultCallback = Callable[[ToolResult], Any]
"""Called with each tool result as it finishes."""

ProgressCallback = Callable[[ToolCallItem, Progress], Awaitable[None] | None]
"""Called with each progress report of a running call (awaited when it returns one)."""


async def _maybe_await(value: Any) -> None:
    if inspect.isawaitable(value):
        await value


@dataclass(slots=True)
class CallHooks:
    """What a run is told about its calls; every hook is optional and may be async.

    ``hold(call)`` true: the call is not run (it waits for approval, see
    :attr:`ToolDispatchSink.held`). ``context(call)`` is the
    :class:`~streamflow.app.tools.ToolCallContext` the tool's task sees.
    """

    hold: Callable[[ToolCallItem], bool] | None = None
    on_start: Callable[[ToolCallItem], Any] | None = None
    on_progress: ProgressCallback | None = None
    on_result: ResultCallback | None = None
    context: Callable[[ToolCallItem], ToolCallContext | None] | None = None


async def _drain(values: AsyncGenerator[Any, Any], call: ToolCallItem,
                 on_progress: ProgressCallback | None) -> Any:
    """Run an async generator tool: its ``Progress`` reports out, its last value back."""
    value: Any = None
    async with aclosing(values):
        async for item in values:
            if isinstance(item, Progress):
                if on_progress is not None:
                    await _maybe_await(on_progress(call, item))
            else:
                value = item
    return value


class ToolDispatcher:
    """Runs tool calls with a timeout and a concurrency limit (see the module doc).

    ``timeout`` is seconds per call (``None``: no limit) unless the tool sets its
    own. A timed-out sync tool's thread is abandoned (Python cannot stop a thread);
    its result is discarded. The limiter binds to the event loop that first uses it.
    """

    def __init__(self, tools: ToolRegistry, *, timeout: float | None = 30.0,
                 max_concurrency: int = 8) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.tools = tools
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """The capacity limiter shared by every call of this dispatcher."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.max_concurrency)
        return self._limiter

    async def call(self, call: ToolCallItem, *, on_progress: ProgressCallback | None = None,
                   context: ToolCallContext | None = None) -> ToolResult:
        """Run one call; always returns its result (errors included), never raises.

        ``on_progress`` gets the :class:`~streamflow.app.tools.Progress` reports of an
        async generator tool; ``context`` is what :func:`~streamflow.app.tools.current_call`
        returns inside the tool.
        """
        prepared = prepare_call(self.tools, call)
        if isinstance(prepared, ToolResult):
            return prepared
        tool, kwargs = prepared
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        async with self.limiter:
            with anyio.move_on_after(timeout) as scope:
                token = set_current_call(context)
                try:
                    if tool.is_async:
                        out = tool.func(**kwargs)
                        if inspect.isasyncgen(out):
                            value = await _drain(out, call, on_progress)
                        else:
                            value = await out
                    else:
                        value = await anyio.to_thread.run_sync(
                            functools.partial(tool.func, **kwargs), abandon_on_cancel=True)
                except Exception as exc:  # the tool failed: tell the model, spare siblings
                    return error_result(call, type(exc).__name__, str(exc))
                finally:
                    reset_current_call(token)
            if scope.cancelled_caught:
                return error_result(call, "Timeout",
                                    f"tool {tool.name!r} timed out after {timeout:g}s")
        arguments = call.arguments if isinstance(call.arguments, dict) else None
        return ToolResult(call.tool_call_id, call.name, value, False, arguments)

    async def call_with(self, call: ToolCallItem, hooks: CallHooks | None) -> ToolResult:
        """:meth:`call` with ``hooks`` told of its start, progress and result."""
        if hooks is None:
            return await self.call(call)
        if hooks.on_start is not None:
            await _maybe_await(hooks.on_start(call))
        context = hooks.context(call) if hooks.context is not None else None
        result = await self.call(call, on_progress=hooks.on_progress, context=context)
        if hooks.on_result is not None:
            await _maybe_await(hooks.on_result(result))
        return result

    async def run(self, calls: Sequence[ToolCallItem],
                  on_result: ResultCallback | None = None,
                  hooks: CallHooks | None = None) -> list[ToolResult]:
        """Run ``calls`` concurrently; the results in call order.

        ``on_result`` is called with each result as it finishes (completion order);
        ``hooks`` are told of each call (``hold`` is not consulted here).
        """
        results: list[ToolResult | None] = [None] * len(calls)

        async def one(index: int, call: ToolCallItem) -> None:
            results[index] = result = await self.call_with(call, hooks)
            if on_result is not None:
                on_result(result)

        async with anyio.create_task_group() as tg:
            for index, call in enumerate(calls):
                tg.start_soon(one, index, call)
        return [r for r in results if r is not None]
