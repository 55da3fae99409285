"""Tool dispatch: validation errors the model can act on, timeouts, exceptions, unknown
tools, concurrency, call order, eager vs lazy start, calls interleaved on the wire."""

from __future__ import annotations

import json
import time
from typing import Any, Literal

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow import StreamDecoder, ToolCallItem, UniEvent
from streamflow.app.tools import ToolRegistry
from streamflow.app.tools.dispatch import ToolDispatcher, ToolDispatchSink

pytestmark = pytest.mark.anyio


def call(name: str, arguments: Any, tool_call_id: str = "") -> ToolCallItem:
    return ToolCallItem("tool_call.done", name, tool_call_id or f"id_{name}", arguments)


def weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Lisbon".
    """
    return {"city": city, "temperature": 17, "unit": unit}


# -- one call ----------------------------------------------------------------------------------

async def test_valid_call_sync_and_async() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    dispatcher = ToolDispatcher(ToolRegistry([weather, add]))
    sync_result = await dispatcher.call(call("weather", {"city": "Lisbon"}, "toolu_1"))
    assert sync_result.tool_call_id == "toolu_1" and not sync_result.is_error
    assert sync_result.content == {"city": "Lisbon", "temperature": 17, "unit": "celsius"}
    assert json.loads(sync_result.text) == sync_result.content
    async_result = await dispatcher.call(call("add", {"a": "2", "b": 3}))
    assert async_result.content == 5 and async_result.text == "5"  # lax: "2" -> 2


async def test_invalid_arguments_return_pydantic_errors_to_the_model() -> None:
    dispatcher = ToolDispatcher(ToolRegistry([weather]))
    result = await dispatcher.call(call("weather", {"city": 42, "unit": "kelvin", "x": 1}))
    assert result.is_error
    assert result.content["error"] == "ValidationError"
    errors = {tuple(e["loc"]): e for e in result.content["errors"]}
    assert errors[("city",)]["type"] == "string_type"
    assert errors[("unit",)]["type"] == "literal_error"
    assert errors[("unit",)]["input"] == "kelvin"
    assert errors[("x",)]["type"] == "extra_forbidden"
    assert "url" not in errors[("city",)]
    assert json.loads(result.text)["errors"][0]["msg"]  # serialisable for the provider
    missing = await dispatcher.call(call("weather", {}))
    assert missing.content["errors"][0]["type"] == "missing"


async def test_unknown_tool_is_an_error_result_listing_the_tools() -> None:
    result = await ToolDispatcher(ToolRegistry([weather])).call(call("get_time", {}))
    assert result.is_error
    assert result.content == {"error": "UnknownTool", "message": "no tool named 'get_time'",
                              "available": ["weather"]}


async def test_exception_becomes_error_result_with_type_and_message() -> None:
    def explode(city: str) -> str:
        raise LookupError(f"no station near {city}")

    result = await ToolDispatcher(ToolRegistry([explode])).call(call("explode", {"city": "X"}))
    assert result.is_error
    assert result.content == {"error": "LookupError", "message": "no station near X"}


async def test_timeout_becomes_error_result_and_siblings_finish() -> None:
    async def slow() -> str:
        await anyio.sleep_forever()
        return "never"

    def blocking() -> str:
        time.sleep(0.5)
        return "never"

    tools = ToolRegistry([weather])
    tools.register(slow, timeout=0.05)
    tools.register(blocking, timeout=0.05)
    results = await ToolDispatcher(tools, timeout=10).run(
        [call("slow", {}), call("weather", {"city": "Oslo"}), call("blocking", {})])
    assert [r.is_error for r in results] == [True, False, True]
    assert results[0].content == {"error": "Timeout",
                                  "message": "tool 'slow' timed out after 0.05s"}
    assert results[2].content["error"] == "Timeout"
    assert results[1].content["city"] == "Oslo"


# -- many calls --------------------------------------------------------------------------------

async def test_results_keep_call_order_and_one_failure_spares_the_others() -> None:
    finished: list[str] = []

    async def job(name: str, wait_for: str = "") -> str:
        if wait_for:
            while wait_for not in finished:
                await anyio.sleep(0)
        if name == "bad":
            raise RuntimeError("boom")
        finished.append(name)
        return name

    calls = [call("job", {"name": "first", "wait_for": "second"}, "c1"),
             call("job", {"name": "bad"}, "c2"),
             call("job", {"name": "second"}, "c3")]
    seen: list[str] = []
    results = await ToolDispatcher(ToolRegistry([job])).run(
        calls, on_result=lambda r: seen.append(r.tool_call_id))
    assert [r.tool_call_id for r in results] == ["c1", "c2", "c3"]
    assert [r.content for r in results] == ["first", {"error": "RuntimeError",
                                                      "message": "boom"}, "second"]
    assert finished == ["second", "first"]  # completion order differs from call order
    assert seen.index("c3") < seen.index("c1")


KINDS = st.sampled_from(["ok", "raises", "invalid", "unknown"])


@settings(max_examples=40, deadline=None)
@given(plan=st.lists(st.tuples(KINDS, st.integers(0, 4)), max_size=8),
       limit=st.integers(1, 4), backend=st.sampled_from(["asyncio", "trio"]))
def test_every_call_gets_exactly_one_result_in_call_order(
        plan: list[tuple[str, int]], limit: int, backend: str) -> None:
    async def work(n: int, fail: bool = False) -> int:
        for _ in range(n):  # finish after n scheduler turns: completion order varies
            await anyio.sleep(0)
        if fail:
            raise ValueError(n)
        return n

    calls = []
    for i, (kind, n) in enumerate(plan):
        name = "nope" if kind == "unknown" else "work"
        args: dict[str, Any] = {"n": "x" if kind == "invalid" else n, "fail": kind == "raises"}
        calls.append(call(name, args, f"call_{i}"))
    dispatcher = ToolDispatcher(ToolRegistry([work]), max_concurrency=limit)
    results = anyio.run(dispatcher.run, calls, backend=backend)
    assert [r.tool_call_id for r in results] == [c.tool_call_id for c in calls]
    assert [r.is_error for r in results] == [kind != "ok" for kind, _ in plan]
    assert [r.content["error"] for r in results if r.is_error] == [
        {"raises": "ValueError", "invalid": "ValidationError", "unknown": "UnknownTool"}[k]
        for k, _ in plan if k != "ok"]


async def test_concurrency_limit_is_respected() -> None:
    running = 0
    peak = 0

    async def work(n: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(5):
            await anyio.sleep(0)
        running -= 1
        return n

    dispatcher = ToolDispatcher(ToolRegistry([work]), max_concurrency=2)
    results = await dispatcher.run([call("work", {"n": i}, f"w{i}") for i in range(7)])
    assert [r.content for r in results] == list(range(7))
    assert peak == 2


# -- as a sink ---------------------------------------------------------------------------------

def anthropic_body(calls: list[tuple[str, str, str]]) -> bytes:
    """An Anthropic stream with one tool_use block per (id, name, arguments JSON text)."""
    def ev(data: dict[str, Any]) -> str:
        return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"

    out = [ev({"type": "message_start", "message": {"id": "msg_1", "model": "m", "role":
                                                    "assistant", "content": [],
                                                    "usage": {"input_tokens": 5}}})]
    for index, (tid, name, args) in enumerate(calls):
        out.append(ev({"type": "content_block_start", "index": index, "content_block":
                       {"type": "tool_use", "id": tid, "name": name, "input": {}}}))
        for cut in range(0, len(args), 7):
            out.append(ev({"type": "content_block_delta", "index": index, "delta":
                           {"type": "input_json_delta", "partial_json": args[cut:cut + 7]}}))
        out.append(ev({"type": "content_block_stop", "index": index}))
    out.append(ev({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                   "usage": {"output_tokens": 9}}))
    out.append(ev({"type": "message_stop"}))
    return "".join(out).encode()


def events_of(body: bytes, dialect: str = "anthropic") -> list[UniEvent]:
    decoder = StreamDecoder(dialect)
    return decoder.feed(body) + decoder.close()


async def test_sink_runs_calls_after_the_stream_by_default() -> None:
    started: list[str] = []

    def record(city: str) -> str:
        started.append(city)
        return city.upper()

    events = events_of(anthropic_body([("t1", "record", '{"city": "Lisbon"}'),
                                       ("t2", "record", '{"city": "Porto"}')]))
    sink = ToolDispatchSink(ToolRegistry([record]))
    for event in events:
        await sink.on_event(event)
    await anyio.sleep(0.01)
    assert started == []  # lazy: nothing runs before the stream completed
    await sink.on_end(None)
    assert [r.content for r in sink.results] == ["LISBON", "PORTO"]
    assert [c.tool_call_id for c in sink.calls] == ["t1", "t2"]


async def test_sink_runs_nothing_after_a_stream_error() -> None:
    ran: list[str] = []
    sink = ToolDispatchSink(ToolRegistry([record_factory(ran)]))
    for event in events_of(anthropic_body([("t1", "record", '{"city": "Lisbon"}')]))[:-1]:
        await sink.on_event(event)
    await sink.on_end(ConnectionError("dropped"))
    assert ran == [] and sink.results == [] and len(sink.calls) == 1


def record_factory(ran: list[str]) -> Any:
    def record(city: str) -> str:
        ran.append(city)
        return city

    return record


async def test_eager_sink_starts_a_call_before_the_stream_ends() -> None:
    started = anyio.Event()

    async def record(city: str) -> str:
        started.set()
        return city

    events = events_of(anthropic_body([("t1", "record", '{"city": "Lisbon"}'),
                                       ("t2", "record", '{"city": "Porto"}')]))
    first_done = next(i for i, e in enumerate(events) if e.item and e.item.type ==
                      "tool_call.done")
    async with ToolDispatchSink(ToolRegistry([record]), eager=True) as sink:
        for event in events[:first_done + 1]:
            await sink.on_event(event)
        with anyio.fail_after(5):
            await started.wait()  # running while the second call is still streaming
        for event in events[first_done + 1:]:
            await sink.on_event(event)
        await sink.on_end(None)
        assert [r.content for r in sink.results] == ["Lisbon", "Porto"]


async def test_eager_sink_must_be_entered() -> None:
    sink = ToolDispatchSink(ToolRegistry([weather]), eager=True)
    done = [e for e in events_of(anthropic_body([("t1", "weather", '{"city": "A"}')]))
            if e.item and e.item.type == "tool_call.done"]
    with pytest.raises(RuntimeError, match="async with"):
        await sink.on_event(done[0])


def interleaved_openai_body() -> bytes:
    """Two parallel calls whose argument fragments alternate on the wire (index 0, 1, 0, 1)."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk",
                                      "model": "gpt", "choices": [{"index": 0, "delta": delta,
                                                                   "finish_reason": finish}]})

    def frag(index: int, args: str, tid: str = "", name: str = "") -> dict[str, Any]:
        entry: dict[str, Any] = {"index": index, "function": {"arguments": args}}
        if tid:
            entry.update(id=tid, type="function")
            entry["function"]["name"] = name
        return {"tool_calls": [entry]}

    lines = [chunk({"role": "assistant", "content": None, **frag(0, "", "call_a", "weather")}),
             chunk(frag(1, "", "call_b", "weather")),
             chunk(frag(0, '{"city": "Li')), chunk(frag(1, '{"city": "Os')),
             chunk(frag(0, 'sbon"}')), chunk(frag(1, 'lo", "unit": "fahrenheit"}')),
             chunk({}, "tool_calls"),
             "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk",
                                    "choices": [], "usage": {"prompt_tokens": 9,
                                                             "completion_tokens": 20}}),
             "data: [DONE]"]
    return ("\n\n".join(lines) + "\n\n").encode()


async def test_parallel_calls_interleaved_on_the_wire_get_their_own_results() -> None:
    events = events_of(interleaved_openai_body(), "openai-chat")
    sink = ToolDispatchSink(ToolRegistry([weather]))
    for event in events:
        await sink.on_event(event)
    await sink.on_end(None)
    assert [(c.tool_call_id, c.arguments) for c in sink.calls] == [
        ("call_a", {"city": "Lisbon"}), ("call_b", {"city": "Oslo", "unit": "fahrenheit"})]
    assert [(r.tool_call_id, r.content["city"], r.content["unit"]) for r in sink.results] == [
        ("call_a", "Lisbon", "celsius"), ("call_b", "Oslo", "fahrenheit")]


async def test_eager_calls_already_started_finish_when_the_stream_fails() -> None:
    from streamflow import IncompleteStreamError

    finished: list[str] = []

    async def record(city: str) -> str:
        await anyio.sleep(0)
        finished.append(city)
        return city

    events = events_of(anthropic_body([("t1", "record", '{"city": "Lisbon"}')]))
    sink = ToolDispatchSink(ToolRegistry([record]), eager=True)
    with pytest.raises(IncompleteStreamError):  # the stream's own error, not a group
        async with sink:
            for event in events[:-1]:
                await sink.on_event(event)
            error = IncompleteStreamError("cut")
            await sink.on_end(error)
            raise error
    assert finished == ["Lisbon"] and sink.results[0].content == "Lisbon"
    assert sink.error is error


async def test_a_restarted_stream_forgets_the_calls_of_the_failed_attempt() -> None:
    from streamflow.reactive.operators.on_error import StreamRestart

    events = events_of(anthropic_body([("t1", "weather", '{"city": "Lisbon"}')]))
    sink = ToolDispatchSink(ToolRegistry([weather]))
    for event in events[:-1]:
        await sink.on_event(event)
    await sink.on_event(StreamRestart(ConnectionError("dropped"), 2, len(events) - 1, 0.0))
    for event in events:
        await sink.on_event(event)
    await sink.on_end(None)
    assert [r.tool_call_id for r in sink.results] == ["t1"]
