"""``async with agent.stream(prompt) as run``: a whole Agent run as one ordered stream.

::

    async with agent.stream("What's the weather in Lisbon?") as run:
        async for ev in run:                  # AgentEvent, in order
            if ev.type == "event": ...         # each UniEvent of each turn
            elif ev.type == "tool.progress": print(ev.progress.message)
    result = run.result                       # the AgentResult

A run is a loop of turns, each one :func:`streamflow.stream` over the provider's
response (so one :class:`~streamflow.runtime.Run`: the agent's sinks fed as
``run()`` feeds them, the message assembled once) with a
:class:`~streamflow.sinks.tools.ToolDispatchSink` among the sinks. A driver task
walks the loop and puts each event in a bounded channel the caller reads:
``turn.start``, the turn's ``event`` s, then ``tool.start`` / ``tool.progress`` /
``tool.result`` per call (interleaved when calls run in parallel), and so on to
``run.end``. Calls of tools that need approval are not run: the turn emits one
``approval.request`` each, and the run ends there with ``result.pending``
(:meth:`~streamflow.agent.Agent.resume` goes on). Events of sub-agents come tagged
(see :class:`~streamflow.agent.AgentEvent`).

Leaving the block before ``run.end`` (``break``, an exception, a cancellation)
cancels the driver: the open HTTP response is closed and running tools are
cancelled. The error rule is ``stream()``'s: a failed turn's typed error (with
``partial``) is raised by the iteration after every event before it, and an error
nobody read is raised when the block exits. A turn's run knows its request's
credentials (:func:`streamflow.redaction.with_secrets`), whatever ``send`` made of
the request: its error is scrubbed of them before the sinks see it, and again when
raised (:func:`streamflow.redaction.scrub_error`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._agent_types import (
    AgentEvent,
    AgentResult,
    Turn,
    total_usage,
    wants_tools,
    without_tool_calls,
)
from .errors import LimitExceededError
from .events import JSONDict, ToolCallItem, Usage
from .redaction import scrub_error, secrets_in, with_secrets
from .sinks.tools import CallHooks, ToolDispatchSink
from .streaming.async_stream import stream
from .tools import ToolResult, error_result
from .tools._progress import Progress, ToolCallContext

if TYPE_CHECKING:
    from .agent import Agent


Decision = bool | str
"""A person's answer to an approval request: ``True`` runs the call, ``False`` or a
reason (``str``) denies it (the model gets a tool error saying so)."""

DENIED = "ApprovalDenied"


class AgentStream:
    """One Agent run to iterate (see the module doc); made by ``agent.stream(...)``
    or ``agent.resume(...)``, entered once with ``async with``."""

    def __init__(self, agent: Agent, messages: Sequence[JSONDict] | None = None, *,
                 resume: tuple[AgentResult, dict[str, Decision]] | None = None,
                 buffer: int = 256) -> None:
        self.agent = agent
        self._messages = [dict(m) for m in messages or ()]
        self._resume = resume
        self._buffer = buffer
        self._tg: TaskGroup | None = None
        self._send: MemoryObjectSendStream[AgentEvent] | None = None
        self._receive: MemoryObjectReceiveStream[AgentEvent] | None = None
        self._result: AgentResult | None = None
        self._error: Exception | None = None
        self._finished = False
        self._raised = False
        self._forward: Callable[[AgentEvent], Awaitable[None]] | None = None

    def forward_to(self, forward: Callable[[AgentEvent], Awaitable[None]]) -> AgentStream:
        """Also await ``forward(event)`` for each event as it happens, before the reader is
        given it (``agent_tool`` passes its call's); call it before entering."""
        self._forward = forward
        return self

    # -- context manager ---------------------------------------------------
    async def __aenter__(self) -> AgentStream:
        if self._tg is not None:
            raise RuntimeError("an AgentStream is entered once: call agent.stream(...) again")
        self._send, self._receive = anyio.create_memory_object_stream[AgentEvent](self._buffer)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._drive, name="streamflow-agent-run")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        assert self._tg is not None and self._receive is not None, \
            "use `async with agent.stream(...)`"
        if not self._finished:  # left early: close the response, cancel the tools
            self._tg.cancel_scope.cancel()
        try:
            # The driver keeps its errors for the reader, so the group has nothing to
            # raise; the body's own exception propagates as it is (not in a group).
            await self._tg.__aexit__(None, None, None)
        finally:
            self._receive.close()
        if exc is None and self._error is not None and not self._raised:
            self._raised = True
            raise self._error  # an error nobody read: never silent
        return None

    # -- reading -----------------------------------------------------------
    def __aiter__(self) -> AgentStream:
        return self

    async def __anext__(self) -> AgentEvent:
        if self._receive is None:
            raise RuntimeError("use the run inside `async with agent.stream(...) as run:`")
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self._error is not None and not self._raised:
                self._raised = True
                raise self._error from None
            raise StopAsyncIteration from None

    @property
    def result(self) -> AgentResult:
        """The :class:`~streamflow.agent.AgentResult`, once the run ended (``run.end``)."""
        if self._error is not None:
            raise self._error
        if self._result is None:
            raise RuntimeError("the run has not ended: iterate it to its end first")
        return self._result

    async def final_result(self) -> AgentResult:
        """Read the rest of the run; its result, or its error raised."""
        async for _ in self:
            pass
        return self.result

    # -- the driver --------------------------------------------------------
    async def _drive(self) -> None:
        try:
            self._result = await self._loop()
        except Exception as error:  # the iteration raises it, after the events before it
            self._error = error
        finally:
            self._finished = True
            assert self._send is not None
            self._send.close()

    async def _emit(self, event: AgentEvent) -> None:
        assert self._send is not None
        if self._forward is not None:
            await self._forward(event)
        await self._send.send(event)

    def _hooks(self, number: int, tool_usage: list[Usage]) -> CallHooks:
        """What the dispatcher tells this run about the calls of turn ``number``."""
        tools = self.agent.tools
        started: dict[str, ToolCallItem] = {}

        def hold(call: ToolCallItem) -> bool:
            tool = tools.get(call.name)
            return tool is not None and tool.requires_approval(call.arguments)

        async def start(call: ToolCallItem) -> None:
            started[call.tool_call_id] = call
            await self._emit(AgentEvent("tool.start", number, call=call))

        async def progress(call: ToolCallItem, report: Progress) -> None:
            await self._emit(AgentEvent("tool.progress", number, call=call, progress=report))

        async def done(result: ToolResult) -> None:
            call = started.pop(result.tool_call_id, None) or _call_of(result)
            await self._emit(AgentEvent("tool.result", number, call=call, result=result))

        def context(call: ToolCallItem) -> ToolCallContext:
            async def forward(event: Any) -> None:
                await self._emit(event.nested(call.tool_call_id))

            return ToolCallContext(call, forward, tool_usage.append)

        return CallHooks(hold=hold, on_start=start, on_progress=progress, on_result=done,
                         context=context)

    async def _loop(self) -> AgentResult:
        agent, provider = self.agent, self.agent.provider
        turns: list[Turn] = []
        messages = self._messages
        carried: Usage | None = None
        number = 0
        if self._resume is not None:
            prior, decisions = self._resume
            turns, messages = list(prior.turns), list(prior.messages)
            number, carried = prior.turn_count, prior.carried_usage
            results, decided_usage = await self._decide(prior, decisions)
            if turns:
                last = turns[-1]
                turns[-1] = Turn(last.request, last.message, results,
                                 [*last.tool_usage, *decided_usage])
            elif decided_usage:
                carried = total_usage([carried, *decided_usage])
            held = {r.tool_call_id for r in prior.held_results}
            agent.show_results([r for r in results if r.tool_call_id not in held])
            messages.extend(provider.tool_result_messages(results))
        for _ in range(agent.max_turns):
            number += 1
            request = provider.request(messages, agent.tools)
            agent.restart_sinks()
            if agent.on_request is not None:
                agent.on_request(number, request)
            await self._emit(AgentEvent("turn.start", number))
            tool_usage: list[Usage] = []
            dispatch = ToolDispatchSink(agent.dispatcher, eager=agent.eager,
                                        on_result=agent.on_result,
                                        hooks=self._hooks(number, tool_usage))
            secrets = secrets_in(request.headers, request.url)
            try:
                # the run and its sinks know the request's key, whatever ``send`` returns
                with with_secrets(secrets):
                    async with dispatch:  # eager calls run in its task group
                        async with stream(agent.send(request), dialect=provider.dialect,
                                          sinks=(*agent.sinks, dispatch),
                                          limits=agent.limits) as s:
                            async for event in s:
                                await self._emit(AgentEvent("event", number, event=event))
                            message = s.message
            except Exception as error:  # whatever ``send`` is: no key of the request in it
                scrub_error(error, secrets)
                raise
            if not wants_tools(message):  # no tool runs for this turn (see agent.py)
                turns.append(Turn(request, message))
                messages.append(provider.assistant_message(without_tool_calls(message)))
                return await self._end(AgentResult(turns, messages, turn_count=number,
                                                   carried_usage=carried))
            turn = Turn(request, message, dispatch.results, tool_usage)
            turns.append(turn)
            messages.append(provider.assistant_message(message))
            if dispatch.held:
                for call in dispatch.held:
                    await self._emit(AgentEvent("approval.request", number, call=call))
                agent.show_results(turn.results)
                return await self._end(AgentResult(
                    turns, messages, pending=list(dispatch.held),
                    held_results=list(turn.results),
                    call_order=[c.tool_call_id for c in dispatch.calls], turn_count=number,
                    carried_usage=carried))
            agent.show_results(turn.results)
            messages.extend(provider.tool_result_messages(turn.results))
        raise LimitExceededError("max_turns", agent.max_turns, partial=turns[-1].message)

    async def _end(self, result: AgentResult) -> AgentResult:
        await self._emit(AgentEvent("run.end", result.turn_count, result=result))
        return result

    async def _decide(self, prior: AgentResult,
                      decisions: dict[str, Decision]) -> tuple[list[ToolResult], list[Usage]]:
        """The pending turn's results: approved calls run, denied ones as tool errors,
        with the results held from before, in the turn's call order."""
        number = prior.turn_count
        tool_usage: list[Usage] = []
        hooks = self._hooks(number, tool_usage)
        approved = [c for c in prior.pending if decisions[c.tool_call_id] is True]
        by_id = {r.tool_call_id: r for r in prior.held_results}
        for call in prior.pending:
            decision = decisions[call.tool_call_id]
            if decision is True:
                continue
            reason = decision if isinstance(decision, str) and decision else \
                "the user denied this call"
            denied = error_result(call, DENIED, reason)
            await self._emit(AgentEvent("tool.result", number, call=call, result=denied))
            by_id[call.tool_call_id] = denied
        for result in await self.agent.dispatcher.run(approved, hooks=hooks):
            by_id[result.tool_call_id] = result
        order = prior.call_order or [c.tool_call_id for c in prior.pending]
        return [by_id[i] for i in order if i in by_id], tool_usage


def _call_of(result: ToolResult) -> ToolCallItem:
    return ToolCallItem("tool_call.done", result.name, result.tool_call_id,
                        result.arguments if result.arguments is not None else {})


def check_decisions(result: AgentResult, decisions: dict[str, Decision]) -> dict[str, Decision]:
    """``decisions`` checked against ``result.pending``: one per waiting call, no other."""
    if not result.pending:
        raise ValueError("this result has no call waiting for approval")
    waiting = {c.tool_call_id for c in result.pending}
    unknown = sorted(set(decisions) - waiting)
    if unknown:
        raise ValueError(f"no call waiting for approval has the id {unknown[0]!r}")
    missing = sorted(waiting - set(decisions))
    if missing:
        raise ValueError(f"no decision for the waiting call {missing[0]!r}")
    for call_id, decision in decisions.items():
        if not isinstance(decision, (bool, str)):
            raise TypeError(f"the decision for {call_id!r} is True, False or a reason (str), "
                            f"not {decision!r}")
    return dict(decisions)
