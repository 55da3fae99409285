"""Tools as async generators: Progress reports out as they come, the last value the result;
the timeout and the concurrency limit bound them as they bound any tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from agent_turns import turn

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import Progress, ToolRegistry
from streamflow.app.tools.dispatch import ToolDispatcher
from streamflow.core.events import ToolCallItem
from streamflow.servers.replay import ReplayServer

pytestmark = pytest.mark.anyio


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCallItem:
    return ToolCallItem("tool_call.done", name, call_id, arguments)


def counting_tools(closed: list[str] | None = None) -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool
    async def countdown(n: int) -> AsyncIterator[Progress | str]:
        """Count to n, reporting each step."""
        for i in range(1, n + 1):
            await anyio.sleep(0)
            yield Progress(f"step {i} of {n}", {"done": i, "total": n})
        yield "draft"
        yield f"counted {n}"

    @tools.tool
    async def stuck(n: int) -> AsyncIterator[Progress | str]:
        """Reports once, then hangs."""
        try:
            yield Progress("started")
            await anyio.sleep(30)
            yield "never"
        finally:
            if closed is not None:
                closed.append("stuck")

    @tools.tool
    async def quiet() -> AsyncIterator[Progress]:
        """Only reports."""
        yield Progress("working")

    return tools


async def test_each_progress_is_reported_and_the_last_other_value_is_the_result() -> None:
    reports: list[tuple[str, Progress]] = []
    dispatcher = ToolDispatcher(counting_tools())
    result = await dispatcher.call(call("countdown", n=3),
                                   on_progress=lambda c, p: reports.append((c.tool_call_id, p)))
    assert not result.is_error and result.content == "counted 3"
    assert reports == [("c1", Progress(f"step {i} of 3", {"done": i, "total": 3}))
                       for i in (1, 2, 3)]
    assert (await dispatcher.call(call("quiet"))).content is None  # nothing but reports


async def test_the_timeout_bounds_a_generator_tool_and_closes_it() -> None:
    closed: list[str] = []
    dispatcher = ToolDispatcher(counting_tools(closed), timeout=0.2)
    reports: list[Progress] = []
    with anyio.fail_after(10):
        result = await dispatcher.call(call("stuck", n=1),
                                       on_progress=lambda c, p: reports.append(p))
    assert result.is_error and result.content["error"] == "Timeout"
    assert reports == [Progress("started")] and closed == ["stuck"]


async def test_the_concurrency_limit_holds_for_generator_tools() -> None:
    active, peak = 0, 0
    tools = ToolRegistry()

    @tools.tool
    async def busy(n: int) -> AsyncIterator[Progress | int]:
        """Busy for a while."""
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        for _ in range(3):
            await anyio.sleep(0.01)
            yield Progress("busy")
        active -= 1
        yield n

    dispatcher = ToolDispatcher(tools, max_concurrency=2)
    results = await dispatcher.run([call("busy", f"c{i}", n=i) for i in range(5)])
    assert [r.content for r in results] == [0, 1, 2, 3, 4] and peak == 2


async def test_a_generator_tool_that_raises_is_a_tool_error_after_its_reports() -> None:
    tools = ToolRegistry()

    @tools.tool
    async def flaky() -> AsyncIterator[Progress]:
        """Fails halfway."""
        yield Progress("half")
        raise ConnectionError("lost the index")

    reports: list[Progress] = []
    result = await ToolDispatcher(tools).call(call("flaky"),
                                              on_progress=lambda c, p: reports.append(p))
    assert result.is_error and result.content == {"error": "ConnectionError",
                                                  "message": "lost the index"}
    assert reports == [Progress("half")]


async def test_an_agent_run_streams_the_reports_between_start_and_result() -> None:
    turns = [turn(("countdown", "toolu_c", {"n": 3})), turn(text="Counted.")]
    async with ReplayServer({"/v1/messages": turns}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      counting_tools(), http_sender(client))
        async with agent.stream("Count to three.") as run:
            tool_events = [ev async for ev in run if ev.type.startswith("tool.")]
        sent = server.hits[1].json()["messages"][-1]["content"][0]
    assert [ev.type for ev in tool_events] == ["tool.start"] + ["tool.progress"] * 3 + [
        "tool.result"]
    assert all(ev.call is not None and ev.call.tool_call_id == "toolu_c" for ev in tool_events)
    assert [ev.progress.message for ev in tool_events[1:4]  # type: ignore[union-attr]
            ] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]
    assert run.result.turns[0].results[0].content == "counted 3"
    assert sent["content"] == "counted 3"  # only the result goes to the model


def test_an_async_generator_function_is_an_async_tool() -> None:
    tool = counting_tools().get("countdown")
    assert tool is not None and tool.is_async
    assert tool.parameters["required"] == ["n"]
