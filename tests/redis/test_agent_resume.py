"""A whole Agent run through ResumableStreams and a real redis-server: every event one entry,
served as one UI message, and a reader that reconnects after any event gets the rest.

The run: turn 1 calls a tool, the tool result, turn 2 answers (the replay server plays the
model). Read in ``vercel-ui`` and ``ag-ui`` whole, then cut after each SSE event and resumed
with ``Last-Event-ID``: the bytes put together are the whole body's, every time.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from realredis import chat_app

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.core.events import Usage
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import agent_run
from streamflow.servers.web.resume import ResumableStreams
from streamflow.wire.dialects._emitter import Emitter
from streamflow.wire.encoding import encode

pytestmark = pytest.mark.anyio



def turn(*, call: bool) -> Route:
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test"})
    if call:
        em.tool_call('{"city": "Lisbon"}', name="get_weather", tool_call_id="toolu_1")
        em.stop(Usage(prompt_tokens=20, response_tokens=7), "tool_call")
    else:
        em.text("17 degrees in Lisbon.")
        em.stop(Usage(prompt_tokens=40, response_tokens=5), "stop")
    return Route(chunks=list(encode(em.drain(), "anthropic")))


@asynccontextmanager
async def app_client(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        return {"city": city, "temperature": 17}

    turns = [turn(call=True), turn(call=False)] * 10  # each test run asks again
    async with ReplayServer({"/v1/messages": turns}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=upstream.url, api_key="k", model="m")
        agent = Agent(provider, tools, http_sender(client))
        streams = ResumableStreams(redis_url, heartbeat=0.5)
        app = chat_app(streams, lambda: agent_run(agent, "Weather in Lisbon?"))
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 4000))
        async with streams.running(), httpx.AsyncClient(transport=transport,
                                                        base_url="http://app") as http:
            yield http


def events(body: str) -> list[str]:
    """The SSE events of a body (heartbeat comments left out)."""
    return [e for e in body.split("\n\n") if e.strip() and not e.startswith(":")]


def data(event: str) -> Any:
    (line,) = [x for x in event.split("\n") if x.startswith("data: ")]
    raw = line.removeprefix("data: ")
    return raw if raw == "[DONE]" else json.loads(raw)


@pytest.mark.parametrize("to", ["vercel-ui", "ag-ui"])
async def test_a_run_survives_a_reconnect_after_any_event(redis_url: str, to: str) -> None:
    async with app_client(redis_url) as http:
        started = await http.post(f"/chat/run-{to}?to={to}")
        token = started.headers["x-resume-token"]
        whole = events(started.text)
        for cut in range(1, len(whole)):
            last_id = next(x for x in whole[cut - 1].split("\n") if x.startswith("id: "))[4:]
            rest = await http.get(f"/chat/run-{to}/stream?to={to}",
                                  headers={"last-event-id": last_id, "x-resume-token": token})
            assert events(rest.text) == whole[cut:], f"after event {cut}"
    payloads = [data(e) for e in whole]
    if to == "vercel-ui":
        types = [p["type"] if isinstance(p, dict) else p for p in payloads]
        assert types.count("start-step") == 2 and types[-2:] == ["finish", "[DONE]"]
        (output,) = [p for p in payloads if isinstance(p, dict)
                     and p["type"] == "tool-output-available"]
        assert output == {"type": "tool-output-available", "toolCallId": "toolu_1",
                          "output": {"city": "Lisbon", "temperature": 17}}
        assert types.index("tool-output-available") < len(types) - types[::-1].index("start-step")
    else:
        types = [p["type"] for p in payloads]
        assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
        assert types.count("STEP_STARTED") == 2 and "TOOL_CALL_RESULT" in types


def slow_answer(words: int, delay: float) -> Route:
    """A text turn of ``words`` deltas, one SSE event per chunk, ``delay`` s apart."""
    em = Emitter()
    em.note({"id": "msg_2", "model": "claude-test"})
    for i in range(words):
        em.text(f"word{i} ")
    em.stop(None, "stop")
    body = b"".join(encode(em.drain(), "anthropic"))
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
    return Route(chunks=events, delays=delay)


async def test_an_agent_run_stops_from_another_instance_and_calls_on_finish_once(
        redis_url: str) -> None:
    """Stop reaches an Agent run as it reaches a byte source: the run is cancelled (its
    upstream request closed long before the answer's end) and on_finish hears "aborted"
    once, with the partial the readers saw."""
    finished: list[tuple[Any, str]] = []
    async with ReplayServer({"/v1/messages": [slow_answer(40, 0.1)]}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=upstream.url, api_key="k", model="m")
        agent = Agent(provider, ToolRegistry(), http_sender(client))
        producer = ResumableStreams(
            redis_url, heartbeat=0.2,
            on_finish=lambda answer, *, status: finished.append((answer, status)))
        other = ResumableStreams(redis_url)
        async with producer.running(), other.running():
            await producer.start("agent-stop", agent_run(agent, "Talk."))
            await anyio.sleep(1.0)  # about ten words are out
            asked = anyio.current_time()
            assert await other.stop("agent-stop")
            with anyio.fail_after(5):
                while not finished:
                    await anyio.sleep(0.05)
            took = anyio.current_time() - asked
            await anyio.sleep(0.3)  # a second call would come now
    [(answer, status)] = finished
    assert status == "aborted" and took < 1.5  # the 40 words would take 4 s
    assert answer.text.startswith("word0 word1 ") and "word39" not in answer.text


async def test_a_finished_agent_run_calls_on_finish_once_with_its_steps(
        redis_url: str) -> None:
    finished: list[tuple[Any, str]] = []
    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        return {"city": city, "temperature": 17}

    async with ReplayServer({"/v1/messages": [turn(call=True), turn(call=False)]}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=upstream.url, api_key="k", model="m")
        agent = Agent(provider, tools, http_sender(client))
        streams = ResumableStreams(
            redis_url, on_finish=lambda answer, *, status: finished.append((answer, status)))
        async with streams.running():
            await streams.start("agent-done", agent_run(agent, "Weather in Lisbon?"))
            with anyio.fail_after(10):
                while not finished:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.3)
    [(answer, status)] = finished
    assert status == "completed" and answer.text == "17 degrees in Lisbon."
    assert answer.usage is not None  # every step's, summed
    assert (answer.usage.prompt_tokens, answer.usage.response_tokens) == (60, 12)
    assert [t.role for t in answer.turns] == ["assistant", "user", "assistant"]
    assert '"temperature": 17' in answer.turns[1].parts[0].text.replace(":17", ": 17")


async def test_the_answers_message_id_is_the_same_on_every_instance(redis_url: str) -> None:
    """The id ``create`` was given names the answer wherever it is resumed, and on_finish's."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route as HTTPRoute

    finished: list[Any] = []
    async with ReplayServer({"/v1/messages": [turn(call=False)]}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=upstream.url, api_key="k", model="m")
        agent = Agent(provider, ToolRegistry(), http_sender(client))
        one = ResumableStreams(redis_url, heartbeat=0.5)
        other = ResumableStreams(redis_url, heartbeat=0.5)  # another instance

        async def chat(request: Request) -> Response:
            return await one.create(request, "named", agent_run(agent, "Weather?"),
                                    target="vercel-ui", message_id="answer-7",
                                    on_finish=lambda a, status: finished.append(a))

        async def resume(request: Request) -> Response:
            return await other.response(request, "named", target="vercel-ui")

        apps = [Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])]),
                Starlette(routes=[HTTPRoute("/chat/stream", resume)])]
        async with one.running(), other.running(), \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=apps[0]),
                                  base_url="http://a") as a, \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=apps[1]),
                                  base_url="http://b") as b:
            started = await a.post("/chat")
            resumed = await b.get("/chat/stream",
                                  headers={"x-resume-token": started.headers["x-resume-token"]})
            with anyio.fail_after(5):
                while not finished:
                    await anyio.sleep(0.02)
    first = [data(e) for e in events(started.text)]
    again = [data(e) for e in events(resumed.text)]
    assert first[0] == again[0] == {"type": "start", "messageId": "answer-7"}
    assert first == again
    assert finished[0].id == "answer-7"
