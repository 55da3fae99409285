"""MCP tools: a real MCP server (the SDK's ``MCPServer``, tests/tools/mcp_server.py) over
stdio and over streamable HTTP (uvicorn on loopback), its tools as a ToolRegistry."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
pytest.importorskip("jsonschema", reason="the mcp extra is not installed")

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_server import PIXEL, serve_http

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import (
    MCPTool,
    MCPToolError,
    ToolContent,
    ToolRegistry,
    from_mcp,
    mcp_http,
    mcp_stdio,
)
from streamflow.app.tools.dispatch import ToolDispatcher
from streamflow.core.events import InlineDataItem, TextItem, ToolCallItem
from streamflow.core.requests import Turn
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects._emitter import Emitter
from streamflow.wire.encoding import encode

pytestmark = pytest.mark.anyio

SERVER = StdioServerParameters(command=sys.executable,
                               args=[str(Path(__file__).with_name("mcp_server.py"))])
NAMES = ["get_forecast", "echo", "countdown", "fail", "pixel"]


def call(name: str, arguments: Any, call_id: str = "call_1") -> ToolCallItem:
    return ToolCallItem("tool_call.done", name, call_id, arguments)


@asynccontextmanager
async def stdio_tools(**options: Any) -> AsyncIterator[ToolRegistry]:
    with open("/dev/null", "w") as quiet:  # the server logs each call on its stderr
        async with mcp_stdio(SERVER, errlog=quiet, **options) as tools:
            yield tools


async def test_the_server_tools_become_a_registry_with_their_schemas() -> None:
    async with stdio_tools() as tools:
        assert tools.names == NAMES
        forecast = tools.get("get_forecast")
        assert isinstance(forecast, MCPTool)
        assert forecast.description == "The weather forecast for a city."
        assert forecast.parameters["required"] == ["city"]
        assert forecast.parameters["properties"]["city"]["description"] == "A city name"
        specs = make_provider("anthropic").request([Turn.user("Hi")], tools).json["tools"]
        assert specs[0]["input_schema"] == forecast.parameters


async def test_results_come_back_as_the_server_gave_them() -> None:
    async with stdio_tools() as tools:
        dispatcher = ToolDispatcher(tools)
        forecast, echo, fail, pixel = await dispatcher.run([
            call("get_forecast", {"city": "Lisbon", "days": 2}, "a"),
            call("echo", {"text": "hi"}, "b"), call("fail", {"reason": "no"}, "c"),
            call("pixel", {}, "d")])
    assert forecast.content == {"city": "Lisbon", "temperature_c": 23.5, "conditions": "sunny"}
    assert json.loads(forecast.text) == forecast.content
    assert echo.content == {"result": "hi"}  # MCPServer wraps a str return as structured
    assert fail.is_error and fail.content == {
        "error": "MCPToolError", "message": "Error executing tool fail: refused: no"}
    assert isinstance(pixel.content, ToolContent) and not pixel.is_error
    (image,) = pixel.content.parts
    assert isinstance(image, InlineDataItem)
    assert (image.data, image.mime_type) == (PIXEL, "image/png")
    assert pixel.text == "[image/png]"
    assert pixel.to_dict()["content"]["parts"][0]["mimeType"] == "image/png"


async def test_arguments_are_checked_against_the_input_schema_before_the_call() -> None:
    async with stdio_tools() as tools:
        dispatcher = ToolDispatcher(tools)
        wrong, missing, extra_ok = await dispatcher.run([
            call("echo", {"text": 5}, "a"), call("get_forecast", {}, "b"),
            call("get_forecast", {"city": "Porto", "note": "x"}, "c")])
    assert wrong.is_error and wrong.content["error"] == "ValidationError"
    (error,) = wrong.content["errors"]
    assert (error["loc"], error["input"], error["type"]) == (["text"], 5, "json_schema_type")
    assert "5 is not of type 'string'" in error["msg"]
    assert missing.content["errors"][0]["msg"] == "'city' is a required property"
    assert not extra_ok.is_error  # the schema allows more properties: the server decides


async def test_progress_notifications_reach_the_hook() -> None:
    seen: list[tuple[str | None, dict[str, Any]]] = []
    async with stdio_tools(on_progress=lambda m, d: seen.append((m, d))) as tools:
        (result,) = await ToolDispatcher(tools).run([call("countdown", {"n": 3})])
    assert result.content == {"result": "counted 3"}
    assert seen == [(f"step {i} of 3", {"progress": float(i), "total": 3.0}) for i in (1, 2, 3)]


async def test_the_generator_form_yields_progress_then_the_result() -> None:
    async with stdio_tools() as tools:
        countdown, fail = tools.get("countdown"), tools.get("fail")
        assert isinstance(countdown, MCPTool) and isinstance(fail, MCPTool)
        items = [i async for i in countdown.stream({"n": 2}, lambda m, d: ("progress", m))]
        with pytest.raises(MCPToolError, match="refused: x"):
            [i async for i in fail.stream({"reason": "x"}, lambda m, d: m)]
    assert items == [("progress", "step 1 of 2"), ("progress", "step 2 of 2"),
                     {"result": "counted 2"}]


async def test_from_mcp_takes_an_existing_session_with_a_prefix() -> None:
    with open("/dev/null", "w") as quiet:
        async with stdio_client(SERVER, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = await from_mcp(session, prefix="weather.")
            (result,) = await ToolDispatcher(tools).run([call("weather_echo", {"text": "x"})])
    assert tools.names == [f"weather_{n}" for n in NAMES]  # "." is no provider's name char
    assert tools.get("weather_echo").server_name == "echo"  # type: ignore[union-attr]
    assert result.content == {"result": "x"}


async def test_streamable_http_on_loopback() -> None:
    seen: list[str | None] = []
    with serve_http() as url:
        async with mcp_http(url, headers={"x-test": "1"},
                            on_progress=lambda m, d: seen.append(m)) as tools:
            forecast, count = await ToolDispatcher(tools).run([
                call("get_forecast", {"city": "Faro"}, "a"), call("countdown", {"n": 2}, "b")])
    assert tools.names == NAMES
    assert forecast.content["city"] == "Faro"
    assert count.content == {"result": "counted 2"}
    assert seen == ["step 1 of 2", "step 2 of 2"]


def model_turn(dialect: str, *, call_args: str | None = None, text: str = "") -> bytes:
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test"})
    if call_args is not None:
        em.tool_call(call_args, name="get_forecast", tool_call_id="toolu_1")
        em.stop(None, "tool_call")
    else:
        em.text(text)
        em.stop(None, "stop")
    return b"".join(encode(em.drain(), dialect))


@pytest.mark.parametrize(("dialect", "path"), [("anthropic", "/v1/messages"),
                                              ("openai-chat", "/chat/completions")])
async def test_an_agent_turn_calls_the_mcp_tool_end_to_end(dialect: str, path: str) -> None:
    turns = [Route(chunks=[model_turn(dialect, call_args='{"city": "Lisbon"}')]),
             Route(chunks=[model_turn(dialect, text="Sunny, 22.5 C in Lisbon.")])]
    async with stdio_tools() as tools, ReplayServer({path: turns}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider(dialect, base_url=server.url, api_key="k", model="m")
        result = await Agent(provider, tools, http_sender(client)).run("Weather in Lisbon?")
        first, second = (hit.json() for hit in server.hits)
    (tool_result,) = result.turns[0].results
    assert tool_result.content["temperature_c"] == 22.5
    if dialect == "anthropic":
        assert [t["name"] for t in first["tools"]] == NAMES
        block = second["messages"][-1]["content"][0]
        assert block["tool_use_id"] == "toolu_1" and block["is_error"] is False
        assert json.loads(block["content"]) == tool_result.content
    else:
        assert [t["function"]["name"] for t in first["tools"]] == NAMES
        message = second["messages"][-1]
        assert message["role"] == "tool" and message["tool_call_id"] == "toolu_1"
        assert json.loads(message["content"]) == tool_result.content
    assert result.text == "Sunny, 22.5 C in Lisbon."


async def test_an_image_result_goes_to_each_provider_as_an_image() -> None:
    async with stdio_tools() as tools:
        (pixel,) = await ToolDispatcher(tools).run([call("pixel", {})])
    results = [Turn.results([pixel.to_part()])]
    (message,) = make_provider("anthropic").request(results).json["messages"]
    (block,) = message["content"]
    assert block["content"][0]["type"] == "image"
    assert block["content"][0]["source"]["media_type"] == "image/png"
    tool_message, images = make_provider("openai-chat").request(results).json["messages"]
    assert tool_message == {"role": "tool", "tool_call_id": "call_1", "content": "[image/png]"}
    assert images["role"] == "user"
    assert images["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert isinstance(ToolContent((TextItem("text.done", "a"),)).text, str)
