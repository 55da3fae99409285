"""Answers that survive a failing provider, over real loopback HTTP, on every dialect pair.

Each endpoint is its own loopback server (:mod:`failover_model`): it reads the prefix a
continuation request carries, in its own dialect, and streams the rest of one intended
answer -- a thinking block, a sentence, a tool call -- with the fault its attempt was
given. What a user sees is checked: the text once and whole, the thinking once, one
tool call, one stop, usage summed, every attempt recorded; and a plain sink (one that
cannot take anything back) never sees what was dropped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest
from failover_model import BASE, DIALECTS, PATHS, TEXT, THINKING, Model

import streamflow
from streamflow import (
    Breaker,
    Endpoint,
    Failover,
    HTTPStatusError,
    Message,
    TransportError,
    UniEvent,
)
from streamflow.app.providers import provider_class
from streamflow.core.errors import NoScopeError
from streamflow.core.message import Assembler
from streamflow.reactive.sinks import AsyncSink
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio
PAIRS = [(a, b) for a in DIALECTS for b in DIALECTS]
QUESTION = "What's the weather in Paris?"


def endpoint(dialect: str, url: str) -> Endpoint:
    provider = provider_class(dialect)(base_url=url + BASE[dialect], api_key="key-" + dialect,
                                       model="m")
    return Endpoint.of(provider)


@asynccontextmanager
async def serving(*models: Model | Route) -> AsyncIterator[list[ReplayServer]]:
    """One loopback server per endpoint (a Route: the same for every dialect's path)."""
    async with AsyncExitStack() as stack:
        servers = []
        for model in models:
            if isinstance(model, Route):
                servers.append(await stack.enter_async_context(ReplayServer(model)))
            else:
                servers.append(await stack.enter_async_context(
                    ReplayServer({PATHS[model.dialect]: model})))
        yield servers


def chain_of(servers: list[ReplayServer], dialects: list[str], **options: Any) -> Failover:
    options.setdefault("tries", 1)
    options.setdefault("stall_timeout", 0.5)
    options.setdefault("backoff", lambda n: 0.0)
    return Failover([endpoint(d, s.url) for d, s in zip(dialects, servers, strict=True)],
                    **options)


def assembled(events: list[Any]) -> Message:
    """What a plain sink got, assembled: it must be one grammatical stream."""
    assembler = Assembler()
    for event in events:
        if isinstance(event, UniEvent):
            assembler.feed(event)
    return assembler.message


def check_whole(message: Message) -> None:
    assert message.text == TEXT
    assert message.thinking == THINKING
    (call,) = message.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris", "unit": "celsius"})
    assert message.finish_reason == "tool_call" and message.complete


@pytest.mark.parametrize("fault", ["cut-text", "cut-args", "cut-thinking", "stall", "529"])
@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}>{b}" for a, b in PAIRS])
async def test_an_answer_survives_its_first_endpoint(first: str, second: str,
                                                     fault: str) -> None:
    primary, fallback = Model(first, [fault]), Model(second)
    async with serving(primary, fallback) as servers:
        chain = chain_of(servers, [first, second])
        seen: list[Any] = []
        message = await streamflow.run(chain.source(QUESTION), seen.append)
    check_whole(message)
    check_whole(assembled(seen))  # behind a Holdback: nothing it must take back
    assert sum(1 for e in seen if isinstance(e, UniEvent) and e.event_type == "stop") == 1
    openings = [e for e in seen if isinstance(e, UniEvent) and e.content_items
                and e.content_items[0].type == "tool_call.delta" and e.content_items[0].name]
    assert len(openings) == 1  # the cut call never reached it
    delivery = message.delivery
    assert delivery is not None
    outcomes = [a["outcome"] for a in delivery["attempts"]]
    assert outcomes == (["failed", "stop"] if fault == "529" else ["cut", "stop"])
    assert [a["endpoint"] for a in delivery["attempts"]] == [
        f"{first}:m@{servers[0].url + BASE[first]}", f"{second}:m@{servers[1].url + BASE[second]}"]
    mode, kept = fallback.asked[0]
    if fault in ("cut-text", "stall"):  # went on from the middle of the sentence
        assert mode == ("prefill" if second == "anthropic" else "instruction")
        assert kept and TEXT.startswith(kept) and len(kept) < len(TEXT)
    elif fault == "cut-args":  # the sentence was whole: only the call is asked for again
        assert mode != "none" and kept is not None and TEXT.startswith(kept.rstrip())
    else:  # nothing to go on from: asked again as it was
        assert (mode, kept) == ("none", None)
    usage = message.usage
    reported = [a["usage"]["prompt_tokens"] for a in delivery["attempts"]
                if a["usage"] and a["usage"]["prompt_tokens"] is not None]
    assert usage is not None and usage.prompt_tokens == sum(reported) >= 100
    if fault == "stall":
        assert delivery["stalls"] == 1
        assert delivery["attempts"][0]["error"]["type"] == "StreamTimeoutError"


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}>{b}" for a, b in PAIRS])
async def test_a_fallback_that_fails_too_raises_the_typed_error_with_the_partial(
        first: str, second: str) -> None:
    async with serving(Model(first, ["cut-text"]), Model(second, ["cut-args"])) as servers:
        chain = chain_of(servers, [first, second])
        seen: list[Any] = []
        with pytest.raises(TransportError) as caught:
            await streamflow.run(chain.source(QUESTION), seen.append)
    partial = caught.value.partial
    assert partial is not None and not partial.complete
    assert partial.text == TEXT and partial.thinking == THINKING  # continued, then cut
    assert partial.delivery is not None
    assert [a["outcome"] for a in partial.delivery["attempts"]] == ["cut", "failed"]
    assert assembled(seen).text == TEXT  # the plain sink got everything before the error


async def test_stream_iteration_never_yields_what_a_continuation_drops() -> None:
    async with serving(Model("anthropic", ["cut-args"]), Model("openai-chat")) as servers:
        chain = chain_of(servers, ["anthropic", "openai-chat"])
        events: list[UniEvent] = []
        async with streamflow.stream(chain.source(QUESTION)) as s:
            async for event in s:
                events.append(event)
    check_whole(assembled(events))
    check_whole(s.message)


async def test_the_same_endpoint_is_retried_before_the_next_honouring_retry_after() -> None:
    fails_once = Model("anthropic", ["529"])
    async with serving(fails_once, Model("openai-chat")) as servers:
        waits: list[float] = []

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        chain = chain_of(servers, ["anthropic", "openai-chat"], tries=2,
                         backoff=lambda n: 0.25, sleep=sleep)
        message = await streamflow.run(chain.source(QUESTION))
    check_whole(message)
    assert len(fails_once.asked) == 2 and waits == [0.25]
    assert [a["endpoint"].split(":")[0] for a in message.delivery["attempts"]] == \
        ["anthropic", "anthropic"]  # type: ignore[index]


async def test_a_retry_after_over_max_delay_sends_the_answer_to_the_next_endpoint() -> None:
    slow_down = Route.error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                             "message": "slow down"}},
                            headers={"retry-after": "120"})
    async with serving(slow_down, Model("gemini")) as servers:
        chain = chain_of(servers, ["anthropic", "gemini"], tries=3, max_delay=5)
        message = await streamflow.run(chain.source(QUESTION))
    check_whole(message)
    assert len(servers[0].hits) == 1  # not asked again within two minutes
    assert chain.breaker.state(chain.endpoints[0].name) == "open"  # and passed over for them


async def test_an_endpoint_that_keeps_failing_cools_down_for_every_answer() -> None:
    clock = [0.0]
    overloaded = Route.error(529, {"type": "error", "error": {"type": "overloaded_error",
                                                              "message": "Overloaded"}})
    async with serving(overloaded, Model("openai-chat", [None] * 10)) as servers:
        chain = chain_of(servers, ["anthropic", "openai-chat"],
                         breaker=Breaker(failures=2, cooldown=60, clock=lambda: clock[0]))
        for _ in range(4):
            check_whole(await streamflow.run(chain.source(QUESTION)))
        assert len(servers[0].hits) == 2  # open after two failures: passed over since
        clock[0] = 61  # the cooldown is over: one answer tries it again (half open)
        check_whole(await streamflow.run(chain.source(QUESTION)))
        assert len(servers[0].hits) == 3
        assert chain.breaker.state(chain.endpoints[0].name) == "open"


async def test_every_endpoint_cooling_down_fails_at_once_with_a_503() -> None:
    overloaded = Route.error(529, {"type": "error", "error": {"type": "overloaded_error",
                                                              "message": "Overloaded"}})
    async with serving(overloaded, overloaded) as servers:
        chain = chain_of(servers, ["anthropic", "anthropic"],
                         breaker=Breaker(failures=1, cooldown=60))
        with pytest.raises(HTTPStatusError):
            await streamflow.run(chain.source(QUESTION))
        asked = sum(len(s.hits) for s in servers)
        with pytest.raises(HTTPStatusError) as caught:
            await streamflow.run(chain.source(QUESTION))
    assert sum(len(s.hits) for s in servers) == asked  # failed fast: nobody was asked
    assert caught.value.status == 503 and caught.value.type == "circuit_open"
    assert caught.value.retry_after is not None and 1 <= caught.value.retry_after <= 60


async def test_a_first_chunk_timeout_counts_as_a_failure_and_a_stall() -> None:
    silent = Route(chunks=[b"", b"event: ping\ndata: {}\n\n"], delays=[30.0, 0.0])
    async with serving(silent, Model("openai-responses")) as servers:
        chain = chain_of(servers, ["anthropic", "openai-responses"], first_chunk_timeout=0.3)
        message = await streamflow.run(chain.source(QUESTION))
    check_whole(message)
    first = message.delivery["attempts"][0]  # type: ignore[index]
    assert first["outcome"] == "failed" and first["error"]["type"] == "StreamTimeoutError"
    assert "first_chunk" in first["error"]["message"]
    assert message.delivery["stalls"] == 1  # type: ignore[index]


async def test_a_request_error_is_raised_at_once() -> None:
    refused = Route.error(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                           "message": "max_tokens too large"}})
    async with serving(refused, Model("gemini")) as servers:
        chain = chain_of(servers, ["anthropic", "gemini"])
        with pytest.raises(HTTPStatusError) as caught:
            await streamflow.run(chain.source(QUESTION))
    assert caught.value.status == 400
    assert not servers[1].hits  # the fallback would refuse it too: not asked


async def test_no_continuation_when_the_chain_is_told_not_to() -> None:
    async with serving(Model("anthropic", ["cut-text"]), Model("gemini")) as servers:
        chain = chain_of(servers, ["anthropic", "gemini"], continue_after_output=False)
        with pytest.raises(TransportError) as caught:
            await streamflow.run(chain.source(QUESTION))
    assert not servers[1].hits
    assert caught.value.partial is not None and TEXT.startswith(caught.value.partial.text)


async def test_stalls_and_cuts_on_three_endpoints_make_one_answer() -> None:
    models = [Model("gemini", ["stall"]), Model("openai-chat", ["cut-text"]),
              Model("anthropic")]
    async with serving(*models) as servers:
        chain = chain_of(servers, ["gemini", "openai-chat", "anthropic"])
        message = await streamflow.run(chain.source(QUESTION), streamflow.LogSink())
    check_whole(message)
    delivery = message.delivery
    assert delivery is not None and delivery["stalls"] == 1
    assert [a["outcome"] for a in delivery["attempts"]] == ["cut", "cut", "stop"]
    assert delivery["ttft_s"] is not None and delivery["inter_chunk_p99_s"] is not None


async def test_the_keys_of_every_attempt_stay_out_of_the_error() -> None:
    async with serving(Model("anthropic", ["cut-text"]),
                       Route.error(401, {"error": {"message": "bad key key-openai-chat",
                                                   "type": "auth"}})) as servers:
        chain = chain_of(servers, ["anthropic", "openai-chat"])
        with pytest.raises(HTTPStatusError) as caught:
            await streamflow.run(chain.source(QUESTION))
    assert "key-openai-chat" not in str(caught.value)
    assert caught.value.partial is not None and caught.value.partial.text


class Slow(AsyncSink):
    """An AsyncSink that waits ``delay`` s per event, with room for two."""

    buffer = 2

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.events: list[Any] = []

    async def on_event(self, event: Any) -> None:
        await anyio.sleep(self.delay)
        self.events.append(event)


async def test_a_chain_reads_at_a_waiting_sink_s_pace_within_its_deadline() -> None:
    """The chain paces its reading as a source's pump does: a sink that waits slows it
    down and loses nothing; one that stops taking events is waited for only until the
    attempt's deadline (a typed error, with the answer so far)."""
    async with serving(Model("anthropic")) as servers:
        slow = Slow(0.001)
        message = await streamflow.run(chain_of(servers, ["anthropic"]).source(QUESTION),
                                       slow)
        check_whole(message)
        assert assembled(slow.events).text == TEXT
        stuck = Slow(30.0)
        chain = chain_of(servers, ["anthropic"], limits=streamflow.Limits(deadline=1.0))
        with pytest.raises(streamflow.StreamTimeoutError) as caught:
            await streamflow.run(chain.source(QUESTION), stuck)
    assert caught.value.kind == "deadline"
    assert caught.value.partial is not None and not caught.value.partial.complete


def test_a_chain_needs_a_scope() -> None:
    chain = Failover(["anthropic:claude-sonnet-4-5"])
    with pytest.raises(NoScopeError):
        streamflow.run_sync(chain.source(QUESTION))


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        Failover([])
    with pytest.raises(ValueError):
        Failover(["anthropic:claude-sonnet-4-5"], tries=0)
    with pytest.raises(ValueError):
        Breaker(failures=0)




async def test_the_stall_timeout_bounds_the_wait_for_headers_too() -> None:
    """An upstream that takes the request and never answers is left at the stall timeout
    (not at the default idle timeout of ten minutes)."""
    import time

    import anyio
    from anyio.abc import SocketStream

    from tests.sources.test_http_timeouts import hostile

    async def never(stream: SocketStream) -> None:
        await anyio.sleep(30)

    async with hostile(never) as silent, serving(Model("openai-chat")) as servers:
        chain = Failover([endpoint("anthropic", silent), endpoint("openai-chat",
                                                                  servers[0].url)],
                         tries=1, stall_timeout=0.5)
        started = time.monotonic()
        message = await streamflow.run(chain.source(QUESTION))
    assert time.monotonic() - started < 5
    check_whole(message)
    first = message.delivery["attempts"][0]  # type: ignore[index]
    assert first["outcome"] == "failed" and "no response headers" in first["error"]["message"]
