"""What an Agent run gives back: its events, its turns, its result and the state to resume it.

:class:`AgentEvent` is one step of a run as :class:`~streamflow.app.agent.AgentStream`
yields it; :class:`Turn` one request and what came of it; :class:`AgentResult` the
whole run -- the conversation (neutral :class:`~streamflow.core.requests.Turn` s), the
summed usage and, when a
call waits for a person's decision, :attr:`AgentResult.pending`. The state a pending
run needs to go on is plain JSON (:meth:`AgentResult.to_state`,
:meth:`AgentResult.from_state`), so it can cross a request or a process. Sans-IO.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..core._tools._progress import Progress
from ..core.events import (
    JSONDict,
    ToolCallItem,
    UniEvent,
    Usage,
    total_usage,
    usage_from_dict,
    usage_to_dict,
)
from ..core.message import Message
from ..core.requests import Turn as ChatTurn
from .providers import HTTPRequest
from .tools import ToolResult

AgentEventType = Literal["turn.start", "event", "tool.start", "tool.progress", "tool.result",
                         "approval.request", "output", "run.end"]

STATE_VERSION = 2
"""The state's version (2: the conversation as neutral turns; 1 held provider messages)."""


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One step of an Agent run, in order (``async for ev in run``).

    ``type`` says which fields are set: ``event`` (the UniEvent) for ``"event"``;
    ``call`` (the tool call) for ``tool.*`` and ``approval.request``; ``progress``
    for ``tool.progress``; ``result`` -- the :class:`~streamflow.app.tools.ToolResult`
    for ``tool.result``, the :class:`AgentResult` for ``run.end``; ``output`` for
    ``"output"`` (an ``Agent(output=T)`` run): the structured output so far as plain
    JSON, each time it has grown enough to show, the validated object last, just
    before ``run.end``. ``turn`` counts the
    run's requests from 1. Events of a sub-agent (a tool running another Agent) have
    ``depth`` 1 (2 for its own sub-agents...) and ``parent_call_id``, the id of the
    call that runs it; the run's own events have depth 0 and no parent.
    """

    type: AgentEventType
    turn: int
    event: UniEvent | None = None
    call: ToolCallItem | None = None
    result: ToolResult | AgentResult | None = None
    progress: Progress | None = None
    output: Any = None
    depth: int = 0
    parent_call_id: str | None = None

    def nested(self, call_id: str) -> AgentEvent:
        """This event as seen from the run whose call ``call_id`` started its run."""
        return replace(self, depth=self.depth + 1,
                       parent_call_id=self.parent_call_id or call_id)


@dataclass(slots=True)
class Turn:
    """One request and what came of it: the assembled message and the tool results.

    ``tool_usage`` holds the usage of runs the turn's tools started (sub-agents).
    """

    request: HTTPRequest
    message: Message
    results: list[ToolResult] = field(default_factory=list)
    tool_usage: list[Usage] = field(default_factory=list)


@dataclass(slots=True)
class AgentResult:
    """Every turn, and the whole conversation as neutral turns (final answer last).

    :attr:`output` is the validated structured output of an ``Agent(output=T)`` run
    (a ``T``), ``None`` for other runs. A run that stopped for approval has
    :attr:`pending` calls: ``messages`` then ends
    with the assistant message that made them, :attr:`held_results` are the results of
    that turn's other calls (already run) and ``agent.resume(result, decisions)`` goes
    on. A result rebuilt with :meth:`from_state` has no ``turns`` (their usage is kept
    in ``carried_usage``).
    """

    turns: list[Turn]
    messages: list[ChatTurn]
    pending: list[ToolCallItem] = field(default_factory=list)
    held_results: list[ToolResult] = field(default_factory=list)
    call_order: list[str] = field(default_factory=list)
    turn_count: int = 0
    carried_usage: Usage | None = None
    output: Any = None

    def __post_init__(self) -> None:
        self.turn_count = max(self.turn_count, len(self.turns))

    @property
    def message(self) -> Message:
        """The last turn's message: the final answer (or the turn asking for approval)."""
        if not self.turns:
            raise LookupError("a result rebuilt from its state has no turns: resume it")
        return self.turns[-1].message

    @property
    def text(self) -> str:
        """The final answer's text."""
        return self.message.text

    @property
    def usage(self) -> Usage:
        """Tokens and cost summed over every turn and the sub-agents its tools ran
        (a field is ``None`` if nothing reported it)."""
        usages: list[Usage | None] = [self.carried_usage]
        for turn in self.turns:
            usages.append(turn.message.usage_metadata)
            usages.extend(turn.tool_usage)
        return total_usage(usages)

    @property
    def cost(self) -> float | None:
        """The total cost in USD, when the provider reported one."""
        return self.usage.cost

    def to_state(self) -> JSONDict:
        """What resuming needs, as JSON: the conversation, the calls waiting, the results
        already run, the turn count and the usage so far (``json.dumps`` takes it)."""
        return {"version": STATE_VERSION, "turn_count": self.turn_count,
                "messages": [m.to_dict() for m in self.messages],
                "pending": [call_to_dict(c) for c in self.pending],
                "held_results": [r.to_dict() for r in self.held_results],
                "call_order": list(self.call_order),
                "usage": usage_to_dict(self.usage)}

    @classmethod
    def from_state(cls, state: JSONDict) -> AgentResult:
        """The result :meth:`to_state` described (no turns: see the class doc)."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"not an AgentResult state of version {STATE_VERSION}: "
                             f"{state.get('version')!r}")
        held = [ToolResult(str(r["tool_call_id"]), str(r["name"]), r.get("content"),
                           bool(r.get("is_error"))) for r in state.get("held_results", [])]
        return cls([], [ChatTurn.from_dict(m) for m in state["messages"]],
                   pending=[call_from_dict(c) for c in state.get("pending", [])],
                   held_results=held, call_order=[str(i) for i in state.get("call_order", [])],
                   turn_count=int(state.get("turn_count", 0)),
                   carried_usage=usage_from_dict(state.get("usage")))


def call_to_dict(call: ToolCallItem) -> JSONDict:
    """A finished tool call as JSON: ``{"tool_call_id", "name", "arguments"}``."""
    return {"tool_call_id": call.tool_call_id, "name": call.name, "arguments": call.arguments}


def call_from_dict(data: JSONDict) -> ToolCallItem:
    """Inverse of :func:`call_to_dict`."""
    arguments = data.get("arguments")
    return ToolCallItem("tool_call.done", str(data.get("name", "")),
                        str(data.get("tool_call_id", "")),
                        arguments if isinstance(arguments, (str, dict)) else {})


def without_tool_calls(message: Message) -> Message:
    """``message`` minus its tool calls (for a turn whose calls will get no result)."""
    if not message.tool_calls:
        return message
    return replace(message, items=[i for i in message.items if not isinstance(i, ToolCallItem)])


def wants_tools(message: Message) -> bool:
    """True when the turn ended asking for tool results (and made at least one call)."""
    return message.finish_reason == "tool_call" and bool(message.tool_calls)
