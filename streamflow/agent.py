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

``run()`` is ``stream()`` read to its end (:mod:`streamflow._agent_stream` has the
event order and the cancellation and error rules). A tool marked
``needs_approval`` is not run: the run ends with ``result.pending``, and
``agent.resume(result, {call_id: True | False | "reason"})`` (an ``AgentStream``;
``await agent.run_resumed(...)`` for the result alone) runs the approved calls, sends
the denied ones back as tool errors and goes on. ``result.to_state()`` /
``AgentResult.from_state(...)`` carry a pending run across a request as JSON.

Each turn builds the provider's request from the conversation so far
(:meth:`Provider.request`), sends it with ``send`` -- any ``HTTPRequest -> byte
source`` function: :func:`http_sender` for a real API, a replay server, a test
double -- and runs the stream through the caller's sinks plus a
:class:`~streamflow.sinks.tools.ToolDispatchSink`. When the turn ends with
``finish_reason == "tool_call"``, the assistant message (thinking signatures, tool
ids and argument objects kept, see :mod:`streamflow.providers`) and the tool results,
both in the provider's own format, are appended to the conversation, and the next
turn starts. A conversation still asking for tools after ``max_turns`` turns raises
``LimitExceededError(limit="max_turns")``; a failed stream raises its typed error
(``partial`` attached) and runs no tool (unless ``eager``, where calls already
started finish first).

Tools run only for a turn that ended with ``finish_reason == "tool_call"``: a turn
cut by ``length`` that had emitted calls runs none of them, and its assistant
message goes into the conversation without those unanswered calls (an API refuses
tool calls with no results when the conversation goes on); :attr:`Turn.message`
still shows them. In ``eager`` mode calls start before the finish reason is known;
on such a turn their results are dropped.

Before each request the sinks with a ``reset()`` method (the render, log and otel
sinks) restart their clock, so each turn's timings are its own. Sinks with an
``on_tool_result(result)`` method (:class:`~streamflow.RenderSink`) are
shown every tool result, in call order, after the turn's tools ran.
:attr:`AgentResult.usage` sums the usage (and the cost) of every turn, and of the
sub-agents its tools ran (:func:`streamflow.tools.agent_tool`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx

from ._agent_stream import AgentStream, Decision, check_decisions
from ._agent_types import (
    AgentEvent,
    AgentEventType,
    AgentResult,
    Turn,
    total_usage,
    wants_tools,
    without_tool_calls,
)
from .events import JSONDict
from .limits import Limits
from .providers import HTTPRequest, Provider
from .sinks.tools import ResultCallback, ToolDispatcher
from .sources import Source, from_httpx
from .tools import ToolRegistry, ToolResult
from .types import SinkLike

__all__ = ["Agent", "AgentEvent", "AgentEventType", "AgentResult", "AgentStream", "Decision",
           "SendFn", "Turn", "http_sender", "total_usage", "wants_tools", "without_tool_calls"]

SendFn = Callable[[HTTPRequest], Source]
"""Sends one request; returns the (cold) source of its response body."""


def http_sender(client: httpx.AsyncClient, *, limits: Limits | None = None) -> SendFn:
    """A ``send`` function posting each request with ``client`` (status checked, streamed)."""
    def send(request: HTTPRequest) -> Source:
        def build() -> httpx.Request:
            return client.build_request(request.method, request.url, headers=request.headers,
                                        content=request.body)

        return from_httpx(client, build, limits=limits)

    return send


class Agent:
    """Runs the tool loop of one provider (see the module doc).

    ``sinks`` see every turn's stream (a render sink draws each turn);
    ``on_request(turn_number, request)`` runs before each request is sent and
    ``on_results(results)`` after each turn's tools ran, in call order. ``eager``,
    ``timeout`` and ``max_concurrency`` go to the dispatch sink.
    """

    def __init__(self, provider: Provider, tools: ToolRegistry, send: SendFn, *,
                 sinks: Iterable[SinkLike] = (), max_turns: int = 8, eager: bool = False,
                 timeout: float | None = 30.0, max_concurrency: int = 8,
                 on_request: Callable[[int, HTTPRequest], Any] | None = None,
                 on_results: Callable[[list[ToolResult]], Any] | None = None,
                 on_result: ResultCallback | None = None,
                 limits: Limits | None = None) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.provider = provider
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

    def stream(self, prompt: str | Sequence[JSONDict]) -> AgentStream:
        """The run from ``prompt`` (a user text, or a conversation in provider format) as an
        :class:`AgentStream`: ``async with agent.stream(prompt) as run: async for ev in run``.
        """
        messages = ([self.provider.user_message(prompt)] if isinstance(prompt, str)
                    else [dict(m) for m in prompt])
        return AgentStream(self, messages)

    async def run(self, prompt: str | Sequence[JSONDict]) -> AgentResult:
        """Run turns from ``prompt`` (a user text, or a conversation in provider format)."""
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
