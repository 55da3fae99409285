"""The agent loop: stream, run the tools the model called, send the results back, repeat.

::

    async with httpx.AsyncClient(timeout=None) as client:
        agent = Agent(AnthropicProvider(thinking_budget=2048), tools, http_sender(client),
                      sinks=[RenderSink()])
        result = await agent.run("What's the weather in Lisbon?")
    print(result.text)

    async with agent.stream("What's the weather in Lisbon?") as run:   # the same, as events
        async for ev in run:          # AgentEvent: turn.start, event, tool.*, run.end ...
            ...
    result = run.result

``run()`` is ``stream()`` read to its end (:mod:`streamflow.app._agent_stream` has the
event order and the cancellation and error rules). A tool marked
``needs_approval`` is not run: the run ends with ``result.pending``, and
``agent.resume(result, {call_id: True | False | "reason"})`` (an ``AgentStream``;
``await agent.run_resumed(...)`` for the result alone) runs the approved calls, sends
the denied ones back as tool errors and goes on. ``result.to_state()`` /
``AgentResult.from_state(...)`` carry a pending run across a request as JSON.

Each turn builds the provider's request from the conversation so far -- neutral
:class:`~streamflow.core.requests.Turn` s, written by the dialect's own request side
(:meth:`Provider.request`), so the loop runs on every dialect with one -- sends it
with ``send`` -- any ``HTTPRequest -> byte source`` function: :func:`http_sender` for
a real API, a replay server, a test double -- and runs the stream through the caller's
sinks plus a :class:`~streamflow.app.tools.dispatch.ToolDispatchSink`. When the turn
ends with ``finish_reason == "tool_call"``, the assistant turn
(``Turn.assistant(message)``: thinking signatures, tool ids and argument objects
kept, see :mod:`streamflow.core.requests`) and the tool results are appended to the
conversation, and the next turn starts. A conversation still asking for tools after
``max_turns`` turns raises ``LimitExceededError(limit="max_turns")``; a failed stream
raises its typed error (``partial`` attached) and runs no tool (unless ``eager``,
where calls already started finish first).

Tools run only for a turn that ended with ``finish_reason == "tool_call"``: a turn
cut by ``length`` that had emitted calls runs none of them, and its assistant
message goes into the conversation without those unanswered calls (an API refuses
tool calls with no results when the conversation goes on); :attr:`Turn.message`
still shows them. In ``eager`` mode calls start before the finish reason is known;
on such a turn their results are dropped.

``Agent(output=T)`` (a pydantic model, a ``TypeAdapter``-able type or a JSON schema
dict) asks for structured output in the dialect's own way -- the neutral
``response_format``, which each request side writes as ``response_format``,
``output_config.format``, ``text.format`` or ``responseJsonSchema``; a dialect whose
request side takes none gets a ``final_result`` tool whose arguments are the output --
streams the object as it grows (``"output"`` events, partial objects as plain JSON) and
validates the final answer into ``result.output``. An answer that does not validate is
sent back with the validation errors for another try, ``output_retries`` times at most
(as instructor's ``max_retries``); then :class:`~streamflow.core.errors.OutputValidationError`
is raised with the message and the last partial object.

Before each request the sinks with a ``reset()`` method (the render, log and otel
sinks) restart their clock, so each turn's timings are its own. Sinks with an
``on_tool_result(result)`` method (:class:`~streamflow.RenderSink`) are
shown every tool result, in call order, after the turn's tools ran.
:attr:`AgentResult.usage` sums the usage (and the cost) of every turn, and of the
sub-agents its tools ran (:func:`streamflow.app.tools.agent_tool`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import TypeAdapter

from ..core._tools._progress import Progress, ToolCallContext
from ..core._tools._result import denial
from ..core.errors import LimitExceededError, OutputValidationError
from ..core.events import JSONDict, ToolCallItem, Usage
from ..core.limits import DEFAULT_LIMITS, Limits
from ..core.requests import ChatRequest, ToolSpec
from ..core.requests import Turn as ChatTurn
from ..core.structured import OutputParser
from ..core.structured.updates import OutputUpdates, plain
from ..reactive.types import SinkLike
from ..wire.redaction import scrub_error, secrets_in, with_secrets
from ._agent_types import (
    AgentEvent,
    AgentEventType,
    AgentResult,
    Turn,
    total_usage,
    wants_tools,
    without_tool_calls,
)
from .failover import Failover, SendFn, http_sender, own_client
from .providers import HTTPRequest, Provider, provider_for
from .streaming.async_stream import stream
from .tools import ToolRegistry, ToolResult, error_result
from .tools.dispatch import CallHooks, ResultCallback, ToolDispatcher, ToolDispatchSink

__all__ = ["Agent", "AgentEvent", "AgentEventType", "AgentResult", "AgentStream", "Decision",
           "SendFn", "Turn", "http_sender", "total_usage", "wants_tools", "without_tool_calls"]

class Agent:
    """Runs the tool loop of one provider (see the module doc).

    ``provider`` is a :class:`Provider` or a model string (``"anthropic:claude-sonnet-4-5"``,
    :func:`streamflow.app.providers.provider_for`: key and base URL from the SDK's environment
    variables), or a :class:`~streamflow.app.failover.Failover` chain (its first endpoint
    writes the requests; ``fallbacks=[...]`` makes one of ``provider`` and them): every
    turn then survives a failing endpoint, a cut answer continued where it stopped.
    ``send`` posts each request (:func:`http_sender`); without one, each run
    opens its own ``httpx.AsyncClient`` and closes it when the run ends.

    ``output`` asks for a structured output of that type, ``output_retries`` times
    re-asked when it does not validate (see the module doc).

    ``sinks`` see every turn's stream (a render sink draws each turn);
    ``on_request(turn_number, request)`` runs before each request is sent and
    ``on_results(results)`` after each turn's tools ran, in call order. ``eager``,
    ``timeout`` and ``max_concurrency`` go to the dispatch sink.
    """

    def __init__(self, provider: Provider | str | Failover, tools: ToolRegistry | None = None,
                 send: SendFn | None = None, *, fallbacks: Sequence[Provider | str] = (),
                 sinks: Iterable[SinkLike] = (), max_turns: int = 8, eager: bool = False,
                 timeout: float | None = 30.0, max_concurrency: int = 8,
                 on_request: Callable[[int, HTTPRequest], Any] | None = None,
                 on_results: Callable[[list[ToolResult]], Any] | None = None,
                 on_result: ResultCallback | None = None,
                 limits: Limits | None = None, output: Any = None,
                 output_retries: int = 1) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if output_retries < 0:
            raise ValueError("output_retries must be 0 or more")
        tools = tools if tools is not None else ToolRegistry()
        if fallbacks and not isinstance(provider, Failover):
            provider = Failover([provider, *fallbacks])
        #: the chain every turn goes through (``None``: each turn one request to ``provider``)
        self.failover = provider if isinstance(provider, Failover) else None
        if isinstance(provider, Failover):
            primary = provider.primary.provider
            if primary is None:
                raise TypeError("an Agent writes its requests with its chain's first endpoint: "
                                "make it a Provider or a model string")
            provider = primary
        self.provider = provider_for(provider) if isinstance(provider, str) else provider
        self.tools = tools
        self.send = send
        self.sinks = list(sinks)
        self.max_turns = max_turns
        self.eager = eager
        self.dispatcher = ToolDispatcher(tools, timeout=timeout, max_concurrency=max_concurrency)
        self.on_request = on_request
        self.on_results = on_results
        self.on_result = on_result
        self.limits = limits
        self.output = output
        self.output_retries = output_retries
        self.output_format = None if output is None else output_format(output)

    def stream(self, prompt: str | Sequence[ChatTurn]) -> AgentStream:
        """The run from ``prompt`` (a user text, or a conversation of neutral
        :class:`~streamflow.core.requests.Turn` s) as an :class:`AgentStream`:
        ``async with agent.stream(prompt) as run: async for ev in run``.
        """
        return AgentStream(self, conversation_of(prompt))

    async def run(self, prompt: str | Sequence[ChatTurn]) -> AgentResult:
        """Run turns from ``prompt`` (a user text, or a conversation of neutral turns)."""
        async with self.stream(prompt) as run:
            return await run.final_result()

    def resume(self, result: AgentResult, decisions: Mapping[str, Decision]) -> AgentStream:
        """Go on with a run that ended with ``result.pending``, as an :class:`AgentStream`.

        ``decisions`` has one entry per waiting call id: ``True`` runs the call, ``False``
        or a reason denies it (the model gets ``{"error": "ApprovalDenied", "message":
        reason}`` as its result). The run continues on the turn after. ``result`` may
        come from :meth:`AgentResult.from_state` (another request, another process).
        Raises ``ValueError`` at once for a missing or unknown id.
        """
        checked = check_decisions(result, dict(decisions))
        return AgentStream(self, resume=(result, checked))

    async def run_resumed(self, result: AgentResult,
                          decisions: Mapping[str, Decision]) -> AgentResult:
        """:meth:`resume` read to its end: the new result (``run()``'s counterpart)."""
        async with self.resume(result, decisions) as run:
            return await run.final_result()

    def restart_sinks(self) -> None:
        """Before each request: sinks that time a stream (``reset()``) start their clock."""
        for sink in self.sinks:
            reset = getattr(sink, "reset", None)
            if callable(reset):
                reset()

    def show_results(self, results: list[ToolResult]) -> None:
        """Tell the sinks that show tool results, then ``on_results``."""
        if not results:
            return
        for sink in self.sinks:
            show = getattr(sink, "on_tool_result", None)
            if callable(show):
                for result in results:
                    show(result)
        if self.on_results is not None:
            self.on_results(results)

Decision = bool | str
"""A person's answer to an approval request: ``True`` runs the call, ``False`` or a
reason (``str``) denies it (the model gets a tool error saying so)."""



class AgentStream:
    """One Agent run to iterate (see the module doc); made by ``agent.stream(...)``
    or ``agent.resume(...)``, entered once with ``async with``."""

    def __init__(self, agent: Agent, messages: Sequence[ChatTurn] | None = None, *,
                 resume: tuple[AgentResult, dict[str, Decision]] | None = None,
                 buffer: int = 256) -> None:
        self.agent = agent
        self._messages = list(messages or ())
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
        """The :class:`~streamflow.app.agent.AgentResult`, once the run ended (``run.end``)."""
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
            async with self._sender() as send:
                self._result = await self._loop(send)
        except Exception as error:  # the iteration raises it, after the events before it
            self._error = error
        finally:
            self._finished = True
            assert self._send is not None
            self._send.close()

    @asynccontextmanager
    async def _sender(self) -> AsyncIterator[SendFn]:
        """The agent's ``send``; without one, a client of this run's own, closed after it."""
        if self.agent.send is not None:
            yield self.agent.send
            return
        async with own_client() as client:
            yield http_sender(client, limits=self.agent.limits)

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
            if call.name == FINAL_TOOL and self._output_tool():
                return True  # the output itself: never run
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

    async def _loop(self, send: SendFn) -> AgentResult:
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
            if results:
                messages.append(ChatTurn.results([r.to_part() for r in results]))
        retries = 0
        for _ in range(agent.max_turns):
            number += 1
            chat = self._chat(messages)
            request = agent.provider.build(chat)
            agent.restart_sinks()
            if agent.on_request is not None:
                agent.on_request(number, request)
            await self._emit(AgentEvent("turn.start", number))
            tool_usage: list[Usage] = []
            dispatch = ToolDispatchSink(agent.dispatcher, eager=agent.eager,
                                        on_result=agent.on_result,
                                        hooks=self._hooks(number, tool_usage))
            updates = self._output_updates()
            secrets = secrets_in(request.headers, request.url)
            try:
                # the run and its sinks know the request's key, whatever ``send`` returns
                with with_secrets(secrets):
                    async with dispatch:  # eager calls run in its task group
                        source = send(request) if agent.failover is None \
                            else agent.failover.source(chat, send=send)
                        async with stream(source, dialect=provider.dialect,
                                          sinks=(*agent.sinks, dispatch),
                                          limits=agent.limits) as s:
                            async for event in s:
                                await self._emit(AgentEvent("event", number, event=event))
                                shown = None if updates is None else updates.feed(event)
                                if shown is not None:
                                    await self._emit(AgentEvent("output", number, output=shown))
                            message = s.message
            except Exception as error:  # whatever ``send`` is: no key of the request in it
                scrub_error(error, secrets)
                raise
            final_call = self._output_tool() and any(
                c.name == FINAL_TOOL for c in message.tool_calls)
            if final_call or not wants_tools(message):  # no tool runs for this turn
                turns.append(Turn(request, message))
                messages.append(ChatTurn.assistant(message if final_call
                                                   else without_tool_calls(message)))
                if updates is None:
                    return await self._end(AgentResult(turns, messages, turn_count=number,
                                                       carried_usage=carried))
                try:
                    output = updates.parser.final(message)
                except OutputValidationError as error:
                    if retries >= agent.output_retries:
                        raise
                    retries += 1  # the errors go back to the model: another try
                    messages.append(self._retry_turn(message, error, dispatch.results))
                    continue
                await self._emit(AgentEvent("output", number, output=plain(output)))
                return await self._end(AgentResult(turns, messages, turn_count=number,
                                                   carried_usage=carried, output=output))
            turn = Turn(request, message, dispatch.results, tool_usage)
            turns.append(turn)
            messages.append(ChatTurn.assistant(message))
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
            if turn.results:
                messages.append(ChatTurn.results([r.to_part() for r in turn.results]))
        raise LimitExceededError("max_turns", agent.max_turns, partial=turns[-1].message)

    def _output_tool(self) -> bool:
        """Whether the output comes as the ``final_result`` tool's arguments (a dialect
        whose request side has no structured output option)."""
        return (self.agent.output is not None
                and "response_format" not in self.agent.provider.request_side.takes)

    def _chat(self, messages: list[ChatTurn]) -> ChatRequest:
        """The next request, neutral: the conversation, the tools and the output asked for."""
        agent, fmt = self.agent, self.agent.output_format
        if fmt is None:
            return agent.provider.chat_request(messages, agent.tools)
        if self._output_tool():
            final = ToolSpec(FINAL_TOOL, "Give the final answer: call this once, with the "
                             "answer as its arguments.", fmt["schema"])
            return agent.provider.chat_request(messages, [*agent.tools, final])
        return agent.provider.chat_request(messages, agent.tools, response_format=fmt)

    def _output_updates(self) -> OutputUpdates | None:
        """A turn's structured output parser (``None``: the agent asks for none)."""
        agent = self.agent
        if agent.output is None:
            return None
        tool = self._output_tool()
        return OutputUpdates(OutputParser(
            agent.output, output_from="tool" if tool else "text",
            tool_name=FINAL_TOOL if tool else None,
            max_bytes=(agent.limits or DEFAULT_LIMITS).max_message_bytes))

    def _retry_turn(self, message: Any, error: OutputValidationError,
                    ran: list[ToolResult]) -> ChatTurn:
        """What the model is told when its output did not validate: the errors, and to
        answer again (a tool result for a ``final_result`` call, after the results of the
        turn's other calls, ``ran``; else a user turn)."""
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc') or ()) or '(root)'}: "
                             f"{e.get('msg')}" for e in error.errors[:10])
        text = (f"The answer does not match the required schema ({problems}). "
                "Answer again with the corrected JSON only.")
        call = next((c for c in message.tool_calls if c.name == FINAL_TOOL), None)
        if call is not None:
            result = error_result(call, "ValidationError", text, errors=error.errors[:10])
            return ChatTurn.results([*(r.to_part() for r in ran), result.to_part()])
        return ChatTurn.user(text)

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
            denied = denial(call, decision if isinstance(decision, str) else None)
            await self._emit(AgentEvent("tool.result", number, call=call, result=denied))
            by_id[call.tool_call_id] = denied
        for result in await self.agent.dispatcher.run(approved, hooks=hooks):
            by_id[result.tool_call_id] = result
        order = prior.call_order or [c.tool_call_id for c in prior.pending]
        return [by_id[i] for i in order if i in by_id], tool_usage


FINAL_TOOL = "final_result"
"""The tool that carries an ``Agent(output=T)`` run's output where the dialect has no
structured output option."""


def output_format(output: Any) -> JSONDict:
    """The neutral ``response_format`` asking for ``output`` (a pydantic model, a
    ``TypeAdapter``-able type or a JSON schema dict): its JSON schema and a name."""
    if isinstance(output, dict):
        schema, name = output, str(output.get("title") or "output")
    else:
        schema = TypeAdapter(output).json_schema()
        name = getattr(output, "__name__", "") or "output"
    return {"type": "json_schema", "name": re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64],
            "schema": schema}


def conversation_of(prompt: str | Sequence[ChatTurn]) -> list[ChatTurn]:
    """``prompt`` as the conversation to send: a text is one user turn; a sequence must be
    neutral turns (``TypeError`` otherwise: a provider's own message dicts are read into
    turns by its request side, ``get_request(dialect).parse(body).turns``)."""
    if isinstance(prompt, str):
        return [ChatTurn.user(prompt)]
    turns = list(prompt)
    for turn in turns:
        if not isinstance(turn, ChatTurn):
            raise TypeError(f"a conversation is a list of streamflow.core.requests.Turn, not "
                            f"of {type(turn).__name__}; read a provider's own messages with "
                            f"get_request(dialect).parse(body).turns")
    return turns


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
