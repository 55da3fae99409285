"""AgentTelemetry: an Agent run's invoke_agent, chat and execute_tool spans and the GenAI
client metrics, from a real run against the replay server, read back with the SDK's
InMemorySpanExporter and InMemoryMetricReader."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.core.events import Usage
from streamflow.reactive.sinks import semconv as sc
from streamflow.reactive.sinks.otel_agent import AgentTelemetry
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects._emitter import Emitter
from streamflow.wire.encoding import encode

pytestmark = pytest.mark.anyio



def turn(*calls: tuple[str, str, dict[str, Any]], text: str = "") -> Route:
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test-1"})
    for name, call_id, arguments in calls:
        em.tool_call(json.dumps(arguments), name=name, tool_call_id=call_id, new=True)
    if text:
        em.text(text)
    em.stop(Usage(prompt_tokens=10, response_tokens=5), "tool_call" if calls else "stop")
    return Route(chunks=list(encode(em.drain(), "anthropic")))


def tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        return {"city": city, "temperature": 17}

    @registry.tool
    def broken(reason: str) -> str:
        """Always fails."""
        raise ValueError(reason)

    return registry


async def traced_run() -> tuple[list[ReadableSpan], InMemoryMetricReader, Any]:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(exporter))
    turns = [turn(("get_weather", "toolu_1", {"city": "Lisbon"}),
                  ("broken", "toolu_2", {"reason": "no"})), turn(text="Done.")]
    async with ReplayServer({"/v1/messages": turns}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=server.url, api_key="k", model="claude-test")
        agent = Agent(provider, tools(), http_sender(client))
        telemetry = AgentTelemetry.for_agent(agent, agent_name="weather", tracer_provider=spans,
                                             meter_provider=MeterProvider(metric_readers=[reader]))
        async with agent.stream("Weather?") as run:
            async for _ in telemetry.watch(run):
                pass
    return list(exporter.get_finished_spans()), reader, run.result


async def test_a_run_is_one_invoke_agent_span_over_its_turns_and_tools() -> None:
    spans, _, result = await traced_run()
    by_name: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    (agent,) = by_name["invoke_agent weather"]
    assert agent.kind == SpanKind.INTERNAL and agent.parent is None
    attrs = dict(agent.attributes or {})
    assert attrs[sc.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert attrs[sc.GEN_AI_AGENT_NAME] == "weather"
    assert attrs[sc.GEN_AI_PROVIDER_NAME] == "anthropic"
    assert attrs[sc.GEN_AI_USAGE_INPUT_TOKENS] == 20 == result.usage.prompt_tokens
    assert attrs[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 10
    chats = by_name["chat claude-test"]
    assert len(chats) == 2
    assert all(c.kind == SpanKind.CLIENT and c.parent is not None
               and c.parent.span_id == agent.context.span_id for c in chats)
    (weather,) = by_name["execute_tool get_weather"]
    assert weather.parent is not None and weather.parent.span_id == agent.context.span_id
    assert dict(weather.attributes or {}) == {
        sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: "get_weather",
        sc.GEN_AI_TOOL_CALL_ID: "toolu_1", sc.GEN_AI_TOOL_TYPE: "function",
        sc.GEN_AI_TOOL_DESCRIPTION: "The weather."}
    assert weather.status.status_code == StatusCode.UNSET
    (broken,) = by_name["execute_tool broken"]
    assert broken.status.status_code == StatusCode.ERROR
    assert dict(broken.attributes or {})[sc.ERROR_TYPE] == "ValueError"
    first_chat_end = min(c.end_time or 0 for c in chats)
    assert first_chat_end <= (weather.start_time or 0)  # tools run after the turn's stream
    assert (agent.end_time or 0) >= max(s.end_time or 0 for s in spans)


async def test_each_turn_records_the_client_metrics() -> None:
    _, reader, _ = await traced_run()
    data = reader.get_metrics_data()
    assert data is not None
    metrics = {m.name: m for r in data.resource_metrics for s in r.scope_metrics
               for m in s.metrics}
    (duration,) = metrics[sc.GEN_AI_CLIENT_OPERATION_DURATION].data.data_points
    assert duration.count == 2  # one per chat turn
    tokens = {dict(p.attributes or {})[sc.GEN_AI_TOKEN_TYPE]: p.sum
              for p in metrics[sc.GEN_AI_CLIENT_TOKEN_USAGE].data.data_points}
    assert tokens == {"input": 20, "output": 10}
    (first,) = metrics[sc.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK].data.data_points
    assert first.count == 2
