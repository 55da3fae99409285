"""One run of the demo: the agent loop over the bundled server or a real provider, rendered.

:func:`run_demo` starts the :class:`~streamflow.demo.server.DemoServer` on a loopback
port when the plan says ``replay`` (so the request really goes over HTTP), builds
the provider's request builder, and runs :class:`~streamflow.app.agent.Agent` with the
caller's render sink: turn 1 streams thinking, text and the ``get_weather`` call,
the dispatch sink runs the tool, its result goes back in the provider's dialect, and
turn 2 streams the answer. Each turn ends with the render sink's usage footer; the
render sink shows the tool results itself (the Agent hands them over), and a total
line is printed as a note.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..app.agent import Agent, AgentResult, http_sender
from ..app.providers import HTTPRequest, Provider, make_provider
from ..reactive.sinks.render import RenderSink
from . import DEMO_PROMPT
from .plan import Plan
from .record import TurnRecorder
from .server import DemoServer
from .tools import demo_tools

__all__ = ["RECORDED_MODELS", "SYSTEM_PROMPT", "DemoOptions", "demo_provider", "run_demo"]

RECORDED_MODELS = {"anthropic": "claude-sonnet-4-5", "openai-chat": "anthropic/claude-sonnet-4.5"}
SYSTEM_PROMPT = ("You are a concise assistant. Use the get_weather tool for questions about "
                 "the weather, then answer in a few short lines of Markdown.")
# USD per million input/output tokens, for the footer when the provider reports no cost.
PRICES: dict[str, tuple[float, float]] = {"claude-sonnet-4-5": (3.0, 15.0)}


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """What the command line asked for, beyond the :class:`Plan`."""

    fast: bool = False
    prompt: str | None = None
    model: str | None = None
    max_turns: int = 4
    thinking_budget: int = 1024
    record: str | None = None  # a folder: one Recorder file per turn


def demo_provider(plan: Plan, options: DemoOptions, base_url: str | None) -> Provider:
    settings: dict[str, Any] = {"base_url": base_url or plan.base_url, "api_key": plan.api_key}
    if plan.live:
        settings["system"] = SYSTEM_PROMPT
        if options.model:
            settings["model"] = options.model
    else:
        settings["model"] = RECORDED_MODELS[plan.dialect]
    if plan.dialect == "anthropic" and options.thinking_budget > 0 and not plan.base_url:
        settings["thinking_budget"] = options.thinking_budget
    return make_provider(plan.dialect, **settings)


def _prices(plan: Plan, provider: Provider) -> tuple[float, float] | None:
    """The price table's entry when the model really is the priced provider's.

    A ``--base-url`` server (llama.cpp, a proxy) runs whatever it runs under the
    name it was given, so its turns are never priced from the table; a cost the
    provider reports itself is always shown.
    """
    return None if plan.base_url else PRICES.get(provider.model)


def _total(result: AgentResult) -> str:
    usage = result.usage
    prompt, output = usage.prompt_tokens or 0, usage.response_tokens or 0
    turns = len(result.turns)
    return (f"{turns} turn{'s' if turns != 1 else ''} · {prompt:,} input + {output:,} output "
            f"tokens in total")


async def run_demo(plan: Plan, render: RenderSink, options: DemoOptions | None = None,
                   *, on_request: Callable[[int, HTTPRequest], Any] | None = None
                   ) -> AgentResult:
    """Run the demo conversation (see the module doc); returns every turn.

    The error of a failed turn is raised as itself (not inside the ``ExceptionGroup``
    of the loopback server's task group).
    """
    try:
        return await _converse(plan, render, options, on_request)
    except ExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _converse(plan: Plan, render: RenderSink, options: DemoOptions | None,
                    on_request: Callable[[int, HTTPRequest], Any] | None) -> AgentResult:
    options = options or DemoOptions()
    prompt = options.prompt or DEMO_PROMPT
    async with contextlib.AsyncExitStack() as stack:
        base_url: str | None = None
        if plan.live:
            where = plan.base_url or "the provider's API"
            render.note(f"streamflow demo · {plan.dialect} · live from {where} ({plan.reason})")
        else:
            server = DemoServer(plan.dialect, fast=options.fast)
            await stack.enter_async_context(server)
            base_url = server.base_url
            render.note(f"streamflow demo · {plan.dialect} · bundled recording over "
                        f"{server.url} ({plan.reason})")
        provider = demo_provider(plan, options, base_url)
        render.prices = render.prices or _prices(plan, provider)
        client = await stack.enter_async_context(httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=600.0), trust_env=plan.live))
        render.note(f"› {prompt}", style="bold")

        recorder = TurnRecorder(options.record, plan.dialect) if options.record else None
        if recorder is not None:
            stack.callback(recorder.close)
        send = http_sender(client)

        def before(number: int, request: HTTPRequest) -> None:
            render.reset()
            if recorder is not None:
                recorder.begin(number, request)
            if on_request is not None:
                on_request(number, request)

        agent = Agent(provider, demo_tools(), recorder.wrap(send) if recorder else send,
                      sinks=[render, *([recorder] if recorder else [])],
                      max_turns=options.max_turns, on_request=before)
        result = await agent.run(prompt)
        render.note(_total(result))
        return result
