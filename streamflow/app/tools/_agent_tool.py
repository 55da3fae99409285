"""A sub-agent as a tool: :func:`agent_tool` lets one Agent hand a task to another.

::

    researcher = Agent(provider, research_tools, send)
    tools = ToolRegistry([agent_tool(researcher, name="research",
                                     description="Research a question in depth.")])
    lead = Agent(provider, tools, send)

The model calls ``research(task="...")``; the tool runs ``researcher.stream(task)``
and its answer's text is the result. Inside an agent run (``lead.stream(...)``)
every event of the sub-run goes into the lead's stream as it happens, tagged with
the call's ``tool_call_id`` as ``parent_call_id`` and ``depth`` 1 (2 for a
sub-agent's own sub-agents), so calls running in parallel interleave and stay
attributed; the sub-run's usage adds to the lead's :attr:`~streamflow.app.agent.AgentResult.usage`.
A sub-run that ends waiting for approval is a tool error (approve its tools up front,
or give it tools without ``needs_approval``); a failed sub-run is a tool error too.
Sans-IO: the Agent is only imported when the tool runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from pydantic import Field

from ...core._tools._progress import current_call
from ...core._tools._schema import Tool, tool_from_function


class SubAgentPending(Exception):
    """The sub-agent's run ended with calls waiting for approval."""


def agent_tool(agent: Any, *, name: str, description: str | None = None,
               timeout: float | None = None,
               needs_approval: bool | Callable[[dict[str, Any]], bool] = False) -> Tool:
    """A :class:`Tool` that runs ``agent`` (a :class:`~streamflow.app.agent.Agent`) on a task.

    The tool takes one argument, ``task`` (the prompt the sub-agent gets). ``timeout``
    bounds the whole sub-run (the dispatcher's default otherwise);
    ``needs_approval`` as for any tool.
    """

    async def run_agent(task: Annotated[str, Field(description="The task for the agent, "
                                                               "with what it needs to know.")]
                        ) -> AsyncIterator[Any]:
        context = current_call()
        run = agent.stream(task)
        if context is not None:  # each event reaches the caller's run as it happens
            run.forward_to(context.forward)
        async with run:
            result = await run.final_result()
        if context is not None:
            context.add_usage(result.usage)
        if result.pending:
            names = ", ".join(c.name for c in result.pending)
            raise SubAgentPending(f"the agent {name!r} waits for approval of: {names}")
        yield result.text

    return tool_from_function(run_agent, name=name,
                              description=description or f"Hand a task to the agent {name!r}.",
                              timeout=timeout, needs_approval=needs_approval)
