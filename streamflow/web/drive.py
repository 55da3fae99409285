"""Drive a stream or a whole Agent run through a UI encoder into an :class:`Outbox`.

:func:`produce` is what the web responses run: a byte source (decoded with
``dialect``) or a source of UniEvents goes through :func:`streamflow.run` with an
:class:`EncoderSink`; an :class:`AgentRun` runs a copy of its agent with that sink
added, so every turn streams into the same UI message, and each turn's tool results
(the Agent hands them to its sinks' ``on_tool_result``) are written between the steps.
A typed error ends the body with the protocol's in-band error; cancellation (the
client went away) ends it with nothing and cancels the upstream request.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..agent import Agent
from ..dialects.encoder import BodyWriter
from ..errors import StreamflowError
from ..events import JSONDict, UniEvent
from ..limits import Limits
from ..runtime import run
from ..sinks.base import AsyncSink
from ..targets._ui_run import UIRunEncoder
from ..tools import ToolResult
from .outbox import Outbox

__all__ = ["AgentRun", "EncoderSink", "agent_run", "produce"]


@dataclass(frozen=True, slots=True)
class AgentRun:
    """An Agent run still to start: ``agent.run(prompt)`` streamed as one UI message."""

    agent: Agent
    prompt: str | Sequence[JSONDict]


def agent_run(agent: Agent, prompt: str | Sequence[JSONDict]) -> AgentRun:
    """The run of ``agent`` on ``prompt`` (a user text or a conversation), for a response."""
    return AgentRun(agent, prompt)


class EncoderSink(AsyncSink):
    """Writes each UniEvent through ``encoder`` into ``outbox`` (waits when it is full).

    The bytes come from the one encode routine (``writer``, a
    :class:`~streamflow.dialects.encoder.BodyWriter` over ``encoder``).
    """

    def __init__(self, encoder: UIRunEncoder, outbox: Outbox) -> None:
        self.encoder = encoder
        self.writer = BodyWriter(encoder)
        self.outbox = outbox

    async def on_event(self, event: Any) -> None:
        """One stream item; anything but a UniEvent (retry notices...) writes nothing."""
        if isinstance(event, UniEvent):
            await self.outbox.put(self.writer.feed(event))

    def on_tool_result(self, result: ToolResult) -> None:
        """A tool result of the turn that just ended (the Agent calls it between turns)."""
        self.outbox.put_nowait(self.writer.check(self.encoder.tool_results([result])))


async def _run_agent(job: AgentRun, sink: EncoderSink) -> None:
    agent = copy.copy(job.agent)  # the caller's agent is left as it was (it may be shared)
    agent.sinks = [*job.agent.sinks, sink]
    await agent.run(job.prompt)


async def produce(source: Any, encoder: UIRunEncoder, outbox: Outbox, *,
                  dialect: str = "auto", limits: Limits | None = None) -> None:
    """Stream ``source`` (a byte or UniEvent source, or an :class:`AgentRun`) into ``outbox``.

    ``encoder`` must be a ``run=True`` UI encoder. A :class:`StreamflowError`, and a
    run whose last turn never stopped, are written in-band (the response has
    started) and not raised again.
    """
    sink = EncoderSink(encoder, outbox)
    try:
        if isinstance(source, AgentRun):
            await _run_agent(source, sink)
        else:
            await run(source, sink, dialect=dialect, limits=limits)
    except StreamflowError as error:
        await outbox.put(sink.writer.fail(error))
        return
    tail, _ = sink.writer.end()  # the run's end (or, with no stop, the in-band error)
    await outbox.put(tail)
