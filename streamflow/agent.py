"""The agent loop: stream, run the tools the model called, send the results back, repeat.

::

    async with httpx.AsyncClient(timeout=None) as client:
        agent = Agent(AnthropicProvider(thinking_budget=2048), tools, http_sender(client),
                      sinks=[RenderSink()])
        result = await agent.run("What's the weather in Lisbon?")
    print(result.text)

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
:attr:`AgentResult.usage` sums the usage (and the cost) of every turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from .errors import LimitExceededError
from .events import JSONDict, ToolCallItem, Usage
from .limits import Limits
from .message import Message
from .providers import HTTPRequest, Provider
from .runtime import run
from .sinks.tools import ResultCallback, ToolDispatcher, ToolDispatchSink
from .sources import Source, from_httpx
from .tools import ToolRegistry, ToolResult
from .types import SinkLike

__all__ = ["Agent", "AgentResult", "SendFn", "Turn", "http_sender", "total_usage",
           "wants_tools", "without_tool_calls"]

SendFn = Callable[[HTTPRequest], Source]
"""Sends one request; returns the (cold) source of its response body."""


@dataclass(slots=True)
class Turn:
    """One request and what came of it: the assembled message and the tool results."""

    request: HTTPRequest
    message: Message
    results: list[ToolResult] = field(default_factory=list)


@dataclass(slots=True)
class AgentResult:
    """Every turn, and the whole conversation in the provider's format (final answer last)."""

    turns: list[Turn]
    messages: list[JSONDict]

    @property
    def message(self) -> Message:
        """The last turn's message: the final answer."""
        return self.turns[-1].message

    @property
    def text(self) -> str:
        """The final answer's text."""
        return self.message.text

    @property
    def usage(self) -> Usage:
        """Tokens and cost summed over every turn (a field is ``None`` if no turn had it)."""
        return total_usage(t.message.usage_metadata for t in self.turns)

    @property
    def cost(self) -> float | None:
        """The total cost in USD, when the provider reported one."""
        return self.usage.cost


def total_usage(usages: Iterable[Usage | None]) -> Usage:
    """The sum of ``usages`` field by field; a field none of them reported stays ``None``."""
    names = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens", "cost")
    sums: dict[str, Any] = dict.fromkeys(names)
    for usage in usages:
        if usage is None:
            continue
        for name in names:
            value = getattr(usage, name)
            if value is not None:
                sums[name] = (sums[name] or 0) + value
    return Usage(**sums)


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

    async def run(self, prompt: str | Sequence[JSONDict]) -> AgentResult:
        """Run turns from ``prompt`` (a user text, or a conversation in provider format)."""
        provider = self.provider
        messages: list[JSONDict] = ([provider.user_message(prompt)] if isinstance(prompt, str)
                                    else [dict(m) for m in prompt])
        turns: list[Turn] = []
        for number in range(1, self.max_turns + 1):
            request = provider.request(messages, self.tools)
            self._restart_sinks()
            if self.on_request is not None:
                self.on_request(number, request)
            dispatch = ToolDispatchSink(self.dispatcher, eager=self.eager,
                                        on_result=self.on_result)
            async with dispatch:  # eager calls run in its task group
                message = await run(self.send(request), *self.sinks, dispatch,
                                    dialect=provider.dialect, limits=self.limits)
            if not wants_tools(message):  # no tool runs for this turn (see the module doc)
                turns.append(Turn(request, message))
                messages.append(provider.assistant_message(without_tool_calls(message)))
                return AgentResult(turns, messages)
            turn = Turn(request, message, dispatch.results)
            turns.append(turn)
            messages.append(provider.assistant_message(message))
            self._show(turn.results)
            messages.extend(provider.tool_result_messages(turn.results))
        raise LimitExceededError("max_turns", self.max_turns, partial=turns[-1].message)


    def _restart_sinks(self) -> None:
        """Before each request: sinks that time a stream (``reset()``) start their clock."""
        for sink in self.sinks:
            reset = getattr(sink, "reset", None)
            if callable(reset):
                reset()

    def _show(self, results: list[ToolResult]) -> None:
        """Tell the sinks that show tool results, then ``on_results``."""
        for sink in self.sinks:
            show = getattr(sink, "on_tool_result", None)
            if callable(show):
                for result in results:
                    show(result)
        if self.on_results is not None:
            self.on_results(results)


def without_tool_calls(message: Message) -> Message:
    """``message`` minus its tool calls (for a turn whose calls will get no result)."""
    if not message.tool_calls:
        return message
    return replace(message, items=[i for i in message.items if not isinstance(i, ToolCallItem)])


def wants_tools(message: Message) -> bool:
    """True when the turn ended asking for tool results (and made at least one call)."""
    return message.finish_reason == "tool_call" and bool(message.tool_calls)
