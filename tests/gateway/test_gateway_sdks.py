"""Proof: the official SDKs complete a two-turn tool conversation through the gateway.

The gateway runs under real uvicorn on a loopback port; its upstream is the replay
server playing recordings of *another* dialect (thinking with signatures or
encrypted reasoning, tool calls). Each client turn 1 streams the tool calls, the
client sends back the assistant content exactly as its SDK assembled it plus the
tool results, and turn 2 streams the answer. The upstream's second request must
hold its own replay state byte for byte: signatures, encrypted reasoning with its
id, Gemini thought signatures on the part they came on, and the call ids.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from recordings import MODEL, PATHS, replay_state, turn_bodies, turn_messages

from streamflow.core.message import Message
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

UPSTREAMS = ("anthropic", "openai-chat", "openai-responses", "gemini")
WEATHER = {"name": "get_weather", "description": "Current weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                           "unit": {"type": "string"}},
                          "required": ["city"]}}
QUESTION = "What's the weather?"


def result_text(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"city": arguments.get("city"), "sky": "sunny"})


def pairs(client: str) -> list[str]:
    return [u for u in UPSTREAMS if u != client]


def upstream_state(dialect: str, body: dict[str, Any]) -> list[Any]:
    """The same facts read back from the upstream's second request, in its own format."""
    from streamflow.wire.dialects import get_request
    if dialect == "gemini":
        out: list[Any] = []
        model = next(c for c in body["contents"] if c["role"] == "model")
        for part in model["parts"]:
            if "functionCall" in part:
                call = part["functionCall"]
                out.append((call["name"], call["args"], {"thought_signature":
                                                        part["thoughtSignature"]}
                            if "thoughtSignature" in part else None))
                assert "id" not in call  # Gemini sent none: none is made up for it
            elif part.get("thoughtSignature"):
                out.append({"thought_signature": part["thoughtSignature"]})
        return out
    request = get_request(dialect).parse(body)
    assistant = next(t for t in request.turns if t.role == "assistant")
    return replay_state(Message(items=list(assistant.parts)))  # type: ignore[arg-type]


def call_ids(message: Message) -> list[str]:
    return [c.tool_call_id for c in message.tool_calls]


async def _conversation(client: str, upstream: str, gateway: Any) -> None:
    first, second = turn_bodies(upstream)
    turn1, turn2 = turn_messages(upstream)
    routes = {PATHS[upstream]: [Route.from_body(first), Route.from_body(second)]}
    async with ReplayServer(routes) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        run = {"anthropic": _anthropic, "openai-chat": _chat,
               "openai-responses": _responses}[client]
        calls, answer = await run(url)
        bodies = [hit.json() for hit in server.hits]
    assert [(n, a) for _, n, a in calls] == [(c.name, c.arguments) for c in turn1.tool_calls]
    assert answer == turn2.text
    assert len(bodies) == 2
    # The upstream got its replay state back byte for byte, in its own format.
    assert upstream_state(upstream, bodies[1]) == replay_state(turn1)
    text = json.dumps(bodies[1])
    for call_id in call_ids(turn1):
        if upstream != "gemini":
            assert call_id in text and "__sf1_" not in text


async def _anthropic(url: str) -> tuple[list[Any], str]:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="test-key", max_retries=0)
    tool = {"name": WEATHER["name"], "description": WEATHER["description"],
            "input_schema": WEATHER["parameters"]}
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    async with client.messages.stream(model=MODEL["anthropic"], max_tokens=2048,
                                      messages=messages, tools=[tool],
                                      thinking={"type": "enabled", "budget_tokens": 1024}
                                      ) as stream:
        first = await stream.get_final_message()
    for block in first.content:
        if block.type == "thinking":
            assert block.signature, "a thinking block reached the client without its signature"
    uses = [b for b in first.content if b.type == "tool_use"]
    messages += [{"role": "assistant", "content": [b.model_dump() for b in first.content]},
                 {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": b.id,
                      "content": result_text(b.name, b.input)} for b in uses]}]
    async with client.messages.stream(model=MODEL["anthropic"], max_tokens=2048,
                                      messages=messages, tools=[tool]) as stream:
        second = await stream.get_final_message()
    await client.close()
    answer = "".join(b.text for b in second.content if b.type == "text")
    return [(b.id, b.name, b.input) for b in uses], answer


async def _chat(url: str) -> tuple[list[Any], str]:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test-key", max_retries=0)
    tools: Any = [{"type": "function", "function": WEATHER}]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    async with client.chat.completions.stream(model=MODEL["openai-chat"], messages=messages,
                                              tools=tools) as stream:
        first = await stream.get_final_completion()
    reply = first.choices[0].message
    calls = reply.tool_calls or []
    messages += [reply.model_dump(exclude_none=True)] + [
        {"role": "tool", "tool_call_id": c.id,
         "content": result_text(c.function.name, json.loads(c.function.arguments))}
        for c in calls]
    async with client.chat.completions.stream(model=MODEL["openai-chat"], messages=messages,
                                              tools=tools) as stream:
        second = await stream.get_final_completion()
    await client.close()
    return ([(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls],
            second.choices[0].message.content or "")


async def _responses(url: str) -> tuple[list[Any], str]:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test-key", max_retries=0)
    tools: Any = [{"type": "function", **WEATHER}]
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    async with client.responses.stream(model=MODEL["openai-responses"], input=items,
                                       tools=tools, reasoning={"effort": "low"}) as stream:
        first = await stream.get_final_response()
    calls = [o for o in first.output if o.type == "function_call"]
    items += [o.model_dump(exclude_none=True) for o in first.output] + [
        {"type": "function_call_output", "call_id": c.call_id,
         "output": result_text(c.name, json.loads(c.arguments))} for c in calls]
    async with client.responses.stream(model=MODEL["openai-responses"], input=items,
                                       tools=tools) as stream:
        second = await stream.get_final_response()
    await client.close()
    return [(c.call_id, c.name, json.loads(c.arguments)) for c in calls], second.output_text


@pytest.mark.parametrize("upstream", pairs("anthropic"))
async def test_anthropic_sdk_two_tool_turns(upstream: str, gateway: Any) -> None:
    await _conversation("anthropic", upstream, gateway)


@pytest.mark.parametrize("upstream", pairs("openai-chat"))
async def test_openai_chat_sdk_two_tool_turns(upstream: str, gateway: Any) -> None:
    await _conversation("openai-chat", upstream, gateway)


@pytest.mark.parametrize("upstream", pairs("openai-responses"))
async def test_openai_responses_sdk_two_tool_turns(upstream: str, gateway: Any) -> None:
    await _conversation("openai-responses", upstream, gateway)


async def test_openai_chat_sdk_final_message_has_the_assistant_role(gateway: Any) -> None:
    first, _ = turn_bodies("anthropic")
    async with ReplayServer(Route.from_body(first)) as server, \
            gateway(server.url, "anthropic") as url:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        async with client.chat.completions.stream(
                model="m", messages=[{"role": "user", "content": QUESTION}]) as stream:
            final = await stream.get_final_completion()
        await client.close()
    assert final.choices[0].message.model_dump().get("role") == "assistant"
