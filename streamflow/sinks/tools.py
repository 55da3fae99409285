"""Tool dispatch: run the model's tool calls, concurrently, and collect one result per call.

:class:`ToolDispatcher` runs :class:`~streamflow.events.ToolCallItem` calls against a
:class:`~streamflow.tools.ToolRegistry`: each call is looked up and validated
(:func:`~streamflow.tools.prepare_call`), then run in an anyio task group under a
:class:`anyio.CapacityLimiter` (``max_concurrency``) and a per-call timeout (the
tool's own ``timeout`` or the dispatcher's). Sync functions run in a worker thread;
``async def`` functions in the task. Every call yields exactly one
:class:`~streamflow.tools.ToolResult`, in call order; an exception, a timeout, an
unknown tool or invalid arguments is an ``is_error`` result, and never cancels the
sibling calls. A tool written as an async generator runs the same way: each
:class:`~streamflow.tools.Progress` it yields goes to ``on_progress`` as it comes,
and the last other value is its result (the timeout bounds the whole generator,
which is closed when it is cut). :class:`CallHooks` is what an agent run hooks in:
the calls it holds for approval, the start, progress and result of each call, and the
:class:`~streamflow.tools.ToolCallContext` a tool's task sees.

:class:`ToolDispatchSink` is the same as a sink (:class:`~streamflow.sinks.AsyncSink`)
fed the stream's UniEvents: it collects each ``tool_call.done`` and, by default,
runs the calls once the stream completed with ``finish_reason == "tool_call"`` --
never after an error, nor for a turn cut by ``length`` (the model did not finish
asking, and the conversation could not carry the results).
With ``eager=True`` each call starts as soon as its group closes, while the rest of
the stream is still arriving; eager mode needs the sink entered as an async context
manager (its task group outlives the stream)::

    tools = ToolRegistry([get_weather])
    async with ToolDispatchSink(tools, eager=True) as dispatch:
        message = await streamflow.run(source, RenderSink(), dispatch)
    results = dispatch.results            # one per call, in call order
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ..events import ToolCallItem, UniEvent
from ..outcome import StreamRestart
from ..tools import ToolRegistry, ToolResult, error_result, prepare_call
from ..tools._progress import Progress, ToolCallContext, reset_current_call, set_current_call
from .base import AsyncSink

__all__ = ["CallHooks", "ProgressCallback", "ResultCallback", "ToolDispatchSink",
           "ToolDispatcher"]

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
    :class:`~streamflow.tools.ToolCallContext` the tool's task sees.
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

        ``on_progress`` gets the :class:`~streamflow.tools.Progress` reports of an
        async generator tool; ``context`` is what :func:`~streamflow.tools.current_call`
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


class ToolDispatchSink(AsyncSink):
    """Collects a stream's ``tool_call.done`` items and runs them (see the module doc).

    After the stream, :attr:`calls` holds the calls in call order and
    :attr:`results` one result per call run, in the same order (empty when the stream
    failed in lazy mode); :attr:`held` the calls ``hooks.hold`` kept back (not run).
    ``on_result`` sees each result as it finishes; ``hooks`` see each call (see
    :class:`CallHooks`).
    """

    def __init__(self, tools: ToolRegistry | ToolDispatcher, *, eager: bool = False,
                 timeout: float | None = 30.0, max_concurrency: int = 8,
                 on_result: ResultCallback | None = None,
                 hooks: CallHooks | None = None) -> None:
        self.dispatcher = (tools if isinstance(tools, ToolDispatcher)
                           else ToolDispatcher(tools, timeout=timeout,
                                               max_concurrency=max_concurrency))
        self.eager = eager
        self.on_result = on_result
        self.hooks = hooks
        self.calls: list[ToolCallItem] = []
        self.held: list[ToolCallItem] = []
        self._held_at: set[int] = set()
        self.error: BaseException | None = None
        self.finish_reason: str | None = None
        self._slots: list[ToolResult | None] = []
        self._tg: TaskGroup | None = None
        self._pending = 0
        self._idle: anyio.Event | None = None

    @property
    def results(self) -> list[ToolResult]:
        """The finished results, in call order."""
        return [r for r in self._slots if r is not None]

    async def __aenter__(self) -> ToolDispatchSink:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> bool | None:
        tg, self._tg = self._tg, None
        assert tg is not None
        # Wait for the calls already started. When the body failed, its own exception
        # propagates as it is (a task group would wrap it in an ExceptionGroup);
        # under cancellation the started calls are cancelled with the body.
        await tg.__aexit__(None, None, None)
        return None

    async def on_event(self, event: Any) -> None:
        """Take one stream item; a ``tool_call.done`` is recorded (and started if eager).

        A ``StreamRestart`` notice (a retry operator starting the stream over) forgets
        the calls collected so far in lazy mode; eager calls already started stay.
        """
        if isinstance(event, StreamRestart) and not self.eager:
            self.calls.clear()
            self.held.clear()
            self._held_at.clear()
            self._slots.clear()
            self.finish_reason = None
            return
        if not isinstance(event, UniEvent):
            return
        if event.event_type == "stop":
            self.finish_reason = event.finish_reason
            return
        item = event.content_items[0] if event.content_items else None
        if not isinstance(item, ToolCallItem) or item.type != "tool_call.done":
            return
        self.calls.append(item)
        self._slots.append(None)
        hold = self.hooks.hold if self.hooks is not None else None
        if hold is not None and hold(item):
            self.held.append(item)
            self._held_at.add(len(self.calls) - 1)
            return
        if self.eager:
            if self._tg is None:
                raise RuntimeError("ToolDispatchSink(eager=True) must be used as "
                                   "`async with ToolDispatchSink(...) as sink:`")
            self._start(self._tg, len(self.calls) - 1, item)

    async def on_end(self, error: BaseException | None) -> None:
        """Stream over: run the calls (lazy: only when the turn ended with ``tool_call``)
        and wait for every started one."""
        self.error = error
        if not self.eager and error is None and self.calls and self.finish_reason == "tool_call":
            async with anyio.create_task_group() as tg:
                for index, call in enumerate(self.calls):
                    if index not in self._held_at:
                        self._start(tg, index, call)
        await self.wait()

    async def wait(self) -> list[ToolResult]:
        """Wait until every started call finished; the results in call order."""
        while self._pending:
            assert self._idle is not None
            await self._idle.wait()
        return self.results

    def _start(self, tg: TaskGroup, index: int, call: ToolCallItem) -> None:
        if self._pending == 0:
            self._idle = anyio.Event()
        self._pending += 1
        tg.start_soon(self._run_one, index, call)

    async def _run_one(self, index: int, call: ToolCallItem) -> None:
        try:
            result = await self.dispatcher.call_with(call, self.hooks)
            self._slots[index] = result
            if self.on_result is not None:
                self.on_result(result)
        finally:
            self._pending -= 1
            if self._pending == 0 and self._idle is not None:
                self._idle.set()
