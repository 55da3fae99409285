"""Drive a stream or a whole Agent run through a UI encoder into an :class:`Outbox`.

:func:`produce` is what the web responses run: a byte source (decoded with
``dialect``) or a source of UniEvents goes through :func:`streamflow.run` with an
:class:`EncoderSink`; an :class:`AgentRun` is iterated as its ``agent.stream()``, each
AgentEvent written by :func:`~streamflow.wire.dialects.ui_agent.feed_agent_event`, so every
turn streams into the same UI message with the tool input, progress (preliminary
output), results and approval requests between the steps.
A typed error ends the body with the protocol's in-band error; cancellation (the
client went away) ends it with nothing and cancels the upstream request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...app.agent import Agent, AgentEvent, AgentResult, AgentStream, Decision
from ...app.runtime import run
from ...app.tools import ToolResult
from ...core.errors import StreamflowError
from ...core.events import JSONDict, ToolCallItem, UniEvent
from ...core.limits import Limits
from ...core.requests import Turn
from ...reactive.sinks.base import AsyncSink
from ...wire.dialects.encoder import BodyWriter
from ...wire.dialects.ui_agent import feed_agent_event
from ...wire.targets._ui_run import UIRunEncoder
from ._history import from_ui_messages, waiting_step
from ._outbox import Outbox


@dataclass(frozen=True, slots=True)
class AgentRun:
    """An Agent run still to start, streamed as one UI message: ``agent.stream(prompt)``,
    or ``agent.resume(resumed, decisions)`` when ``resumed`` (an ``AgentResult``) is set;
    ``continues`` is the client's ``UIMessage`` the answer goes on with (its id is the
    answer's, and ``on_finish`` gets an :class:`~streamflow.servers.web.Answer` that
    continues it)."""

    agent: Agent
    prompt: str | Sequence[Turn]
    resumed: AgentResult | None = None
    decisions: Mapping[str, Decision] = field(default_factory=dict)
    continues: Mapping[str, Any] | None = None

    def stream(self) -> AgentStream:
        """The run's ``AgentStream`` (enter it with ``async with``)."""
        if self.resumed is not None:
            return self.agent.resume(self.resumed, self.decisions)
        return self.agent.stream(self.prompt)


def agent_run(agent: Agent, prompt: str | Sequence[Turn]) -> AgentRun:
    """The run of ``agent`` on ``prompt``, for a response: a user text or a neutral
    conversation (``Turn`` s, e.g. from :func:`~streamflow.servers.web.from_ui_messages`)."""
    return AgentRun(agent, prompt)


def agent_resume(agent: Agent, result: AgentResult,
                 decisions: Mapping[str, Decision]) -> AgentRun:
    """The rest of a run that ended waiting for approval (``result.pending``), for a
    response: ``decisions`` maps each waiting call id to ``True`` (run it), ``False``
    or a reason (deny it); ``result`` may be ``AgentResult.from_state(...)``."""
    return AgentRun(agent, (), result, dict(decisions))


def agent_answer(agent: Agent, messages: Sequence[Mapping[str, Any]]) -> AgentRun:
    """The agent's answer to a chat's AI SDK ``UIMessage[]``, from the history alone.

    A history whose last step ends in tool calls a person answered (the
    ``approval-responded`` parts ``addToolApprovalResponse`` sends) goes on from that
    step: each approved call runs, once, each denied one gets the model a tool error
    saying so, the step's other results are kept as they came, and the run continues --
    on any instance, with nothing kept between the requests -- in the same UI message
    (the answer's id is the last message's, ``on_finish``'s answer continues it). Any
    other history is a new run on it (:func:`~streamflow.servers.web.from_ui_messages`). A
    call asked about and not answered is a :class:`~streamflow.core.errors.RequestError`.

    ``messages`` must be the server's own copy of the chat: a history a client posts can
    hold any call, "approved". Keep the chat and take only the answers from the posted
    message (:func:`apply_approvals`).
    """
    waiting = waiting_step(messages)
    if waiting is None:
        return AgentRun(agent, from_ui_messages(messages))
    turns, calls, done = waiting
    held = [ToolResult(r.tool_call_id, r.name or "", r.content, r.is_error) for r in done]
    order = [c.tool_call_id for t in turns[-1:] for c in t.parts if isinstance(c, ToolCallItem)]
    result = AgentResult([], list(turns), pending=calls,
                         held_results=held, call_order=order)
    answered = approvals(messages[-1:])
    return AgentRun(agent, (), result, {c.tool_call_id: answered.get(c.tool_call_id, False)
                                        for c in calls}, continues=messages[-1])


def apply_approvals(stored: Mapping[str, Any], posted: Mapping[str, Any]) -> JSONDict:
    """``stored`` (the server's copy of a message waiting for approval) with the answers
    ``posted`` (the client's copy, as ``addToolApprovalResponse`` sends it back) gives its
    ``approval-requested`` calls: only the answers are taken from the client, never its
    parts, so a client cannot rewrite what the assistant said or what a tool returned."""
    said = approvals([posted])
    parts = []
    for part in stored.get("parts") or ():
        answer = said.get(str(part.get("toolCallId") or "")) \
            if isinstance(part, Mapping) and part.get("state") == "approval-requested" else None
        if answer is not None:
            reason = {"reason": answer} if isinstance(answer, str) else {}
            part = {**part, "state": "approval-responded",
                    "approval": {**(part.get("approval") or {}), "approved": answer is True,
                                 **reason}}
        parts.append(part)
    return {**stored, "parts": parts}


def approvals(messages: Sequence[Mapping[str, Any]]) -> dict[str, bool | str]:
    """The approval answers in AI SDK (6 and later) UI messages, by tool call id.

    Reads the tool parts in state ``approval-responded`` (what ``addToolApprovalResponse``
    sends back): ``approval.approved`` true is ``True``; a denial is its ``reason``, or
    ``False``. The approval id streamflow writes is the tool call id.
    """
    out: dict[str, bool | str] = {}
    for message in messages:
        for part in message.get("parts") or ():
            if not isinstance(part, Mapping) or part.get("state") != "approval-responded":
                continue
            approval = part.get("approval") or {}
            call_id = str(approval.get("id") or part.get("toolCallId") or "")
            if call_id:
                out[call_id] = True if approval.get("approved") is True \
                    else (str(approval["reason"]) if approval.get("reason") else False)
    return out


class EncoderSink(AsyncSink):
    """Writes each UniEvent through ``encoder`` into ``outbox`` (waits when it is full).

    The bytes come from the one encode routine (``writer``, a
    :class:`~streamflow.wire.dialects.encoder.BodyWriter` over ``encoder``).
    """

    def __init__(self, encoder: UIRunEncoder, outbox: Outbox) -> None:
        self.encoder = encoder
        self.writer = BodyWriter(encoder)
        self.outbox = outbox

    async def on_event(self, event: Any) -> None:
        """One stream item; anything but a UniEvent (retry notices...) writes nothing."""
        if isinstance(event, UniEvent):
            await self.outbox.put(self.writer.feed(event))

    def on_event_nowait(self, event: Any) -> bool:
        """:meth:`on_event` at once while the outbox has room."""
        if not isinstance(event, UniEvent):
            return True
        if self.outbox.full:
            return False
        self.outbox.put_nowait(self.writer.feed(event))
        return True

    def on_tool_result(self, result: ToolResult) -> None:
        """A tool result of the turn that just ended (the Agent calls it between turns)."""
        self.outbox.put_nowait(self.writer.check(self.encoder.tool_results([result])))


async def run_agent(job: AgentRun, write: Callable[[AgentEvent], Awaitable[None]],
                    also: Sequence[AsyncSink] = ()) -> None:
    """Iterate ``job``'s run: every event to ``write`` (the answer's bytes or records);
    the answer's own events and tool results (not a sub-agent's) to ``also``, which hear
    the run's end as a run's sinks do (``on_end(None)``, or ``on_end(error)`` before a
    :class:`StreamflowError` is raised again). The one Agent loop of the web responses and
    of :class:`~streamflow.servers.web.resume.ResumableStreams`."""
    if job.continues is not None:
        for other in also:
            go_on = getattr(other, "continue_from", None)
            if go_on is not None:
                go_on(job.continues)
    try:
        async with job.stream() as agent:
            async for ev in agent:
                await write(ev)
                if ev.depth:  # a sub-agent's events are not the answer's
                    continue
                for other in also:
                    if ev.type == "event" and ev.event is not None:
                        await other.on_event(ev.event)
                    elif ev.type == "tool.result" and ev.result is not None:
                        on_result = getattr(other, "on_tool_result", None)
                        if on_result is not None:
                            on_result(ev.result)
                    elif ev.type == "approval.request" and ev.call is not None:
                        asked = getattr(other, "on_approval_request", None)
                        if asked is not None:
                            asked(ev.call)
    except StreamflowError as error:
        for other in also:
            await other.on_end(error)
        raise
    for other in also:
        await other.on_end(None)


async def produce(source: Any, encoder: UIRunEncoder, outbox: Outbox, *,
                  dialect: str = "auto", limits: Limits | None = None,
                  also: Sequence[AsyncSink] = ()) -> None:
    """Stream ``source`` (a byte or UniEvent source, or an :class:`AgentRun`) into ``outbox``.

    ``also``: more sinks fed the same events (and an Agent's tool results).
    ``encoder`` must be a ``run=True`` UI encoder. A :class:`StreamflowError`, and a
    run whose last turn never stopped, are written in-band (the response has
    started) and not raised again.
    """
    sink = EncoderSink(encoder, outbox)
    error: StreamflowError | None = None
    try:
        if isinstance(source, AgentRun):
            if source.continues is not None:  # the client's message goes on: its id
                encoder.message_id = source.continues.get("id") or encoder.message_id

            async def write(ev: AgentEvent) -> None:
                data = sink.writer.check(feed_agent_event(sink.encoder, ev))
                if data:
                    await outbox.put(data)

            await run_agent(source, write, also)
        else:
            await run(source, sink, *also, dialect=dialect, limits=limits)
    except StreamflowError as exc:
        error = exc
    tail, _ = sink.writer.close(error)  # the response has started: written, not raised
    await outbox.put(tail)
