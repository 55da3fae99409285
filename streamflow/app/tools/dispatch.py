"""Tool dispatch: run the model's tool calls, concurrently, and collect one result per call.

:class:`ToolDispatcher` runs :class:`~streamflow.core.events.ToolCallItem` calls against a
:class:`~streamflow.app.tools.ToolRegistry`: each call is looked up and validated
(:func:`~streamflow.app.tools.prepare_call`), then run in an anyio task group under a
:class:`anyio.CapacityLimiter` (``max_concurrency``) and a per-call timeout (the
tool's own ``timeout`` or the dispatcher's). Sync functions run in a worker thread;
``async def`` functions in the task. Every call yields exactly one
:class:`~streamflow.app.tools.ToolResult`, in call order; an exception, a timeout, an
unknown tool or invalid arguments is an ``is_error`` result, and never cancels the
sibling calls. A tool written as an async generator runs the same way: each
:class:`~streamflow.app.tools.Progress` it yields goes to ``on_progress`` as it comes,
and the last other value is its result (the timeout bounds the whole generator,
which is closed when it is cut). :class:`CallHooks` is what an agent run hooks in:
the calls it holds for approval, the start, progress and result of each call, and the
:class:`~streamflow.app.tools.ToolCallContext` a tool's task sees.

:class:`ToolDispatchSink` is the same as a sink (:class:`~streamflow.reactive.sinks.AsyncSink`)
fed the stream's UniEvents: it collects each ``tool_call.done`` (of the first choice,
when a response has several: ``Message.tool_calls``) and, by default,
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

from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ...core.events import ToolCallItem, UniEvent, choice_index
from ...core.outcome import StreamRestart
from ...reactive.sinks.base import AsyncSink
from . import ToolRegistry, ToolResult
from ._dispatcher import CallHooks, ProgressCallback, ResultCallback, ToolDispatcher

__all__ = ["CallHooks", "ProgressCallback", "ResultCallback", "ToolDispatchSink",
           "ToolDispatcher"]


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
    def takes_discards(self) -> bool:
        """Lazy: a continuing stream's events live (a continuation that drops groups
        forgets the calls it drops). Eager: through a Holdback (a call starts once it
        can no longer be dropped: at the stop), so no call runs twice."""
        return not self.eager

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

        A ``StreamRestart`` notice (a retry operator starting the stream over, or a
        continuation dropping groups: every tool call of the answer goes with them)
        forgets the calls collected so far in lazy mode; eager calls already started
        stay (a continuing stream reaches an eager dispatcher through a Holdback).
        """
        if isinstance(event, StreamRestart) and not self.eager and (event.whole
                                                                     or event.groups):
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
        if choice_index(item):  # n > 1: the first choice's calls run (Message.tool_calls)
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
