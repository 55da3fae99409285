"""One test per LiteLLM proxy bug the issue lists, showing it does not happen here.

Each goes through the real gateway (uvicorn, loopback) to the official SDKs, with
the replay server as the upstream.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clients import (
    anthropic_final,
    chat_final,
    check_anthropic_grammar,
    raw_events,
    responses_final,
)
from realdata import REAL
from recordings import DATA, MODEL, PATHS, turn_bodies, turn_messages
from test_gateway_sdks import _conversation

from streamflow import assemble
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

UPSTREAM_OF = {"openai_chat": "openai-chat", "gemini": "gemini",
               "openai_responses": "openai-responses", "anthropic": "anthropic"}
NO_ARGS = {"anthropic": "anthropic_no_arg_tool.sse", "openai-chat": "chat_no_arg_tool.sse",
           "gemini": "gemini_no_arg_tool.sse"}


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only: the gateway under test always runs on uvicorn's asyncio loop, and the
    client side of these SDK checks is the same on trio (the two-turn SDK tests and the
    disconnect test run on both)."""
    return "asyncio"


def serve_body(upstream: str, *bodies: bytes) -> Any:
    return ReplayServer({PATHS[upstream]: [Route.from_body(b) for b in bodies]})


async def test_29428_thinking_never_comes_back_with_an_empty_signature(gateway: Any) -> None:
    """LiteLLM re-emitted thinking blocks with ``signature: ""``; the next turn failed."""
    cases = {"openai-chat": [turn_bodies("openai-chat")[0],
                             (DATA / "openai_chat" / "deepseek_reasoning.sse").read_bytes(),
                             (DATA / "openai_chat" / "encrypted_reasoning.sse").read_bytes()],
             "openai-responses": [turn_bodies("openai-responses")[0]],
             "gemini": [turn_bodies("gemini")[0]]}
    for upstream, bodies in cases.items():
        async with serve_body(upstream, *[b for b in bodies for _ in range(2)]) as server, \
                gateway(server.url, upstream, model=MODEL[upstream]) as url:
            for body in bodies:
                source = assemble(body, upstream)
                events = await raw_events(url, "/v1/messages")
                check_anthropic_grammar(events)
                final = await anthropic_final(url)
                thinking = [b for b in final.content if b.type == "thinking"]
                assert [b.thinking for b in thinking if b.thinking] == \
                    [i.thinking for i in source.items if i.kind == "thinking" and i.thinking]
                for block in thinking:  # signed for real, or no signature at all: never ""
                    assert block.signature is None or block.signature != ""
                assert '"signature": ""' not in json.dumps(final.model_dump())


@pytest.mark.parametrize("client", ["anthropic", "openai-chat", "openai-responses"])
async def test_25869_gemini_thought_signatures_come_back_byte_for_byte(
        client: str, gateway: Any) -> None:
    """LiteLLM's stream rebuilder corrupted Gemini thought signatures.

    The upstream's second request must carry ``c2lnLXRoaW5raW5n`` on the thought part
    and ``c2lnLWNhbGwtMQ==`` on the first function call (and nothing on the second),
    exactly where Gemini put them; :func:`_conversation` checks that part by part.
    """
    await _conversation(client, "gemini", gateway)


@pytest.mark.parametrize("upstream", sorted(NO_ARGS))
async def test_5063_a_tool_call_without_arguments_is_an_empty_object(
        upstream: str, gateway: Any) -> None:
    """LiteLLM streamed a call with no arguments as ``arguments: ""`` (not JSON)."""
    body = (DATA / "gateway" / NO_ARGS[upstream]).read_bytes()
    async with serve_body(upstream, body) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        message = await anthropic_final(url)
        chat = await chat_final(url)
        response = await responses_final(url)
        raw = await raw_events(url, "/v1/chat/completions")
    assert [(b.name, b.input) for b in message.content] == [("get_time", {}), ("get_date", {})]
    calls = chat.choices[0].message.tool_calls or []
    assert [(c.function.name, c.function.arguments) for c in calls] == \
        [("get_time", "{}"), ("get_date", "{}")]
    assert [(o.name, o.arguments) for o in response.output if o.type == "function_call"] == \
        [("get_time", "{}"), ("get_date", "{}")]
    arguments = "".join(c["function"].get("arguments", "")
                        for _, d in raw if d != "[DONE]" for ch in d["choices"]
                        for c in ch["delta"].get("tool_calls") or [])
    assert arguments == "{}{}"


@pytest.mark.parametrize("upstream", ["openai-responses", "gemini", "openai-chat"])
async def test_7621_parallel_tool_calls_stay_separate(upstream: str, gateway: Any) -> None:
    """LiteLLM merged parallel tool calls into one argument string."""
    body = (DATA / "openai_chat" / "parallel_interleaved.sse").read_bytes() \
        if upstream == "openai-chat" else turn_bodies(upstream)[0]
    expected = [(c.tool_call_id, c.name, c.arguments) for c in assemble(body, upstream).tool_calls]
    assert len(expected) >= 2
    async with serve_body(upstream, body) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        message = await anthropic_final(url)
        chat = await chat_final(url)
        response = await responses_final(url)
    uses = [b for b in message.content if b.type == "tool_use"]
    calls = chat.choices[0].message.tool_calls or []
    outputs = [o for o in response.output if o.type == "function_call"]
    names_args = [(n, a) for _, n, a in expected]
    assert [(b.name, b.input) for b in uses] == names_args
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == names_args
    assert [(o.name, json.loads(o.arguments)) for o in outputs] == names_args
    assert len({b.id for b in uses}) == len({c.id for c in calls}) == len(expected)


@pytest.mark.parametrize("upstream", ["anthropic", "openai-chat", "openai-responses", "gemini"])
async def test_8349_23847_usage_reaches_every_client(upstream: str, gateway: Any) -> None:
    """LiteLLM's translated streams lost the usage."""
    body = turn_bodies(upstream)[0]
    usage = turn_messages(upstream)[0].usage_metadata
    assert usage is not None and usage.prompt_tokens and usage.response_tokens
    async with serve_body(upstream, body) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        message = await anthropic_final(url)
        chat = await chat_final(url)
        response = await responses_final(url)
    cached = usage.cached_tokens or 0
    assert message.usage.input_tokens + (message.usage.cache_read_input_tokens or 0) \
        + (message.usage.cache_creation_input_tokens or 0) == usage.prompt_tokens
    assert (message.usage.cache_read_input_tokens or 0) == cached
    assert message.usage.output_tokens == usage.response_tokens
    assert chat.usage is not None
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == \
        (usage.prompt_tokens, usage.response_tokens)
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == \
        (usage.prompt_tokens, usage.response_tokens)


def _responses_failures() -> list[tuple[str, bytes]]:
    out = [(p.name, p.read_bytes()) for p in
           (DATA / "openai_responses" / "error_event.sse", DATA / "openai_responses" /
            "failed.sse")]
    real = REAL / "openai_responses" / "vercel_responses_error.jsonl"
    if real.exists():  # JSON lines of the SSE payloads: put the SSE framing back
        lines = [ln for ln in real.read_text().splitlines() if ln.strip()]
        out.append((real.name, "".join(f"data: {ln}\n\n" for ln in lines).encode()))
    return out


@pytest.mark.parametrize(("name", "body"), _responses_failures(), ids=lambda v: str(v)[:24])
async def test_29223_responses_mid_stream_errors_are_raised(
        name: str, body: bytes, gateway: Any) -> None:
    """LiteLLM did not re-raise the Responses API's mid-stream errors."""
    async with serve_body("openai-responses", body) as server, \
            gateway(server.url, "openai-responses") as url:
        with pytest.raises(openai.APIError):
            await responses_final(url)
        with pytest.raises(openai.APIError):
            await chat_final(url)
        with pytest.raises(anthropic.APIStatusError):
            await anthropic_final(url)
        for path in ("/v1/responses", "/v1/messages", "/v1/chat/completions"):
            events = await raw_events(url, path)
            last = [d for _, d in events if d != "[DONE]"][-1]
            assert "error" in last or last.get("type") == "response.failed", (path, last)


def _other_dialect_recordings() -> list[tuple[str, Path]]:
    out = []
    for folder in ("openai_chat", "gemini", "openai_responses"):
        out += [(UPSTREAM_OF[folder], p) for p in sorted((DATA / folder).glob("*.sse"))]
    return out


@pytest.mark.parametrize("upstream", ["openai-chat", "gemini", "openai-responses"])
async def test_13373_claude_code_never_sees_content_block_not_found(
        upstream: str, gateway: Any) -> None:
    """Claude Code failed through ``/v1/messages`` on non-Anthropic models.

    Every recording of the other dialects is streamed to ``/v1/messages``: the event
    sequence keeps the SDK's invariants (a delta only into the open block, of that
    block's type), and the SDK assembles it or raises its own API error.
    """
    paths = [p for u, p in _other_dialect_recordings() if u == upstream]
    bodies = [p.read_bytes() for p in paths]
    async with serve_body(upstream, *[b for b in bodies for _ in range(2)]) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        for path, body in zip(paths, bodies, strict=True):
            events = await raw_events(url, "/v1/messages")
            check_anthropic_grammar(events)
            try:
                final = await anthropic_final(url)
            except anthropic.APIStatusError:
                assert events[-1][0] == "error", path.name
                continue
            source = assemble(body, upstream)
            assert "".join(b.text for b in final.content if b.type == "text") == source.text, \
                path.name
