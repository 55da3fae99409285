"""The gateway's fallbacks, read by the official SDKs: one seamless answer while the first
upstream dies mid-answer (a cut sentence, a cut tool call, an overloaded 529 before any
byte), on every client route and across upstream dialects; the command line's flags.

Each upstream is its own loopback server (:mod:`failover_model`) that continues what it
is asked to in its dialect, so the SDK's final message is checked against one intended
answer: the sentence once and whole, the tool call once with its arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
from clients import anthropic_final, chat_final, responses_final
from conftest import OPENAI_BASE
from failover_model import BASE, PATHS, TEXT, Model
from security.hostile import serve

from streamflow import Failover
from streamflow.servers.gateway import Upstream, create_app
from streamflow.servers.replay import ReplayServer

pytestmark = pytest.mark.anyio
CASES = [("anthropic", "openai-chat"), ("openai-chat", "gemini"),
         ("openai-responses", "anthropic"), ("gemini", "openai-responses")]
ARGS = {"city": "Paris", "unit": "celsius"}


def app_of(first: str, first_url: str, second: str, second_url: str, **options: Any) -> Any:
    fallback = Upstream(second_url + BASE[second], second, api_key="fallback-key", model="m")
    primary = Upstream(first_url + OPENAI_BASE.get(first, ""), first, model="m")
    chain = Failover([u.endpoint({}) for u in (primary, fallback)], tries=1, **options)
    return create_app(primary, fallbacks=[fallback], failover=chain)


def text_and_call(client: str, final: Any) -> tuple[str, str, dict[str, Any]]:
    """The SDK's final answer: its text, its one tool call's name and arguments."""
    if client == "anthropic":
        text = "".join(b.text for b in final.content if b.type == "text")
        (call,) = [b for b in final.content if b.type == "tool_use"]
        return text, call.name, call.input
    if client == "openai-chat":
        message = final.choices[0].message
        (call,) = message.tool_calls
        return message.content or "", call.function.name, json.loads(call.function.arguments)
    text = "".join(c.text for item in final.output if item.type == "message"
                   for c in item.content if c.type == "output_text")
    (call,) = [i for i in final.output if i.type == "function_call"]
    return text, call.name, json.loads(call.arguments)


FINALS = {"anthropic": anthropic_final, "openai-chat": chat_final,
          "openai-responses": responses_final}


@pytest.mark.parametrize("fault", ["cut-text", "cut-args", "529"])
@pytest.mark.parametrize("client", sorted(FINALS))
@pytest.mark.parametrize(("first", "second"), CASES, ids=[f"{a}>{b}" for a, b in CASES])
async def test_an_official_sdk_reads_one_answer_while_the_upstream_dies(
        first: str, second: str, client: str, fault: str) -> None:
    primary, fallback = Model(first, [fault]), Model(second)
    async with ReplayServer({PATHS[first]: primary}) as one, \
            ReplayServer({PATHS[second]: fallback}) as two, \
            serve(app_of(first, one.url, second, two.url)) as url:
        final = await FINALS[client](url)
    text, name, arguments = text_and_call(client, final)
    assert text == TEXT
    assert (name, arguments) == ("get_weather", ARGS)
    assert len(one.hits) == 1 and len(two.hits) == 1
    assert two.hits[0].headers.get(
        "x-api-key" if second == "anthropic" else
        "x-goog-api-key" if second == "gemini" else "authorization", "").endswith("fallback-key")
    if fault == "cut-text":  # the fallback went on from the middle of the sentence
        mode, kept = fallback.asked[0]
        assert mode in ("prefill", "instruction") and kept and len(kept) < len(TEXT)


async def test_a_cut_tool_call_never_reaches_the_client_in_pieces() -> None:
    """The client's body is written as it comes, so a call is held until it is whole."""
    async with ReplayServer({PATHS["anthropic"]: Model("anthropic", ["cut-args"])}) as one, \
            ReplayServer({PATHS["openai-chat"]: Model("openai-chat")}) as two, \
            serve(app_of("anthropic", one.url, "openai-chat", two.url)) as url, \
            httpx.AsyncClient() as client:
        response = await client.post(url + "/v1/messages", json={
            "model": "m", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]})
    starts = [line for line in response.text.splitlines()
              if 'content_block_start' in line and '"type":"tool_use"' in line]
    assert len(starts) == 1  # one tool_use block: the cut one was never written
    assert response.text.count("event: message_stop") == 1
    assert "delivery" not in response.text and two.url not in response.text  # no endpoints


async def test_an_upstream_that_never_sends_its_first_chunk_is_left_for_the_fallback() -> None:
    silent = Model("openai-chat", ["stall"])
    async with ReplayServer({PATHS["openai-chat"]: silent}) as one, \
            ReplayServer({PATHS["anthropic"]: Model("anthropic")}) as two, \
            serve(app_of("openai-chat", one.url, "anthropic", two.url,
                         stall_timeout=0.4)) as url:
        started = time.monotonic()
        final = await chat_final(url)
    assert time.monotonic() - started < 10
    assert text_and_call("openai-chat", final) == (TEXT, "get_weather", ARGS)


async def test_every_upstream_failing_before_the_answer_is_the_clients_http_error() -> None:
    async with ReplayServer({PATHS["anthropic"]: Model("anthropic", ["529"])}) as one, \
            ReplayServer({PATHS["gemini"]: Model("gemini", ["529"])}) as two, \
            serve(app_of("anthropic", one.url, "gemini", two.url)) as url, \
            httpx.AsyncClient() as client:
        response = await client.post(url + "/v1/chat/completions", json={
            "model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 503  # the last upstream's status, in the client's envelope
    assert response.json()["error"]["message"]


def test_the_command_line_serves_a_chain(tmp_path: Any) -> None:
    """``streamflow gateway --fallback URL --fallback-dialect D``: an SDK sees one answer."""
    import anyio

    async def scenario() -> None:
        async with ReplayServer({PATHS["openai-chat"]: Model("openai-chat", ["cut-text"])}) \
                as one, ReplayServer({PATHS["gemini"]: Model("gemini")}) as two:
            port = _free_port()
            env = {**os.environ, "FALLBACK_KEY": "k2"}
            process = subprocess.Popen(
                [sys.executable, "-m", "streamflow", "gateway", "--listen", f"127.0.0.1:{port}",
                 "--upstream", one.url + "/v1", "--upstream-dialect", "openai-chat",
                 "--fallback", two.url, "--fallback-dialect", "gemini",
                 "--fallback-key-env", "FALLBACK_KEY", "--fallback-model", "m",
                 "--stall-timeout", "5", "--log-level", "warning"],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                url = f"http://127.0.0.1:{port}"
                for _ in range(100):
                    try:
                        async with httpx.AsyncClient() as client:
                            await client.get(url + "/v1/models", timeout=1)
                        break
                    except httpx.HTTPError:
                        await anyio.sleep(0.1)
                final = await anthropic_final(url)
            finally:
                process.terminate()
                process.wait(10)
        text, name, arguments = text_and_call("anthropic", final)
        assert (text, name, arguments) == (TEXT, "get_weather", ARGS)
        assert two.hits[0].headers.get("x-goog-api-key") == "k2"

    anyio.run(scenario)


def test_the_command_line_refuses_a_fallback_without_its_dialect() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "streamflow", "gateway", "--upstream", "http://127.0.0.1:9",
         "--upstream-dialect", "anthropic", "--fallback", "http://127.0.0.1:8"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--fallback-dialect" in done.stderr


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_output_and_an_error_in_the_first_chunk_reach_the_client_in_band() -> None:
    """Nothing the upstream gave is lost: the text before the error is the client's."""
    from streamflow import ProviderError, TextItem, UniEvent
    from streamflow.servers.replay import Route
    from streamflow.wire.dialects import get_encoder
    from streamflow.wire.dialects.encoder import BodyWriter

    writer = BodyWriter(get_encoder("anthropic")())
    body = writer.feed(UniEvent("delta", [TextItem("text.delta", "Paris is")]))
    tail, _ = writer.close(ProviderError("Overloaded", code=529, type="overloaded_error"))
    async with ReplayServer(Route(chunks=[body + tail])) as one, \
            serve(create_app(one.url, "anthropic")) as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/v1/messages", json={
            "model": "m", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    assert '"text":"Paris is"' in response.text.replace(" ", "") or "Paris is" in response.text
    assert "event: error" in response.text and "overloaded_error" in response.text
