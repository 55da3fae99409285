"""Issue 37: a failover chain of two live llama.cpp servers, the first stopped mid-answer.

Each test starts two ``llama-server`` processes of its own (the ``llama_servers`` fixture:
``STREAMFLOW_LLAMA_SERVER`` and ``STREAMFLOW_LLAMA_MODEL``; skipped without them), asks
one greedy story through a :class:`~streamflow.Failover` of the two (openai-chat), and
kills (SIGKILL) or freezes (SIGSTOP) the first once a few text tokens reached the
consumer. The answer must end once, from the second server, as one answer: what the
first server gave, then what the second added -- nothing lost or repeated at the splice.

The oracle is the second server asked directly, afterwards, for the continuation the
chain asked it for (its own non-streamed greedy answer): what the chain spliced in is
that continuation, less the whitespace (prefill) or the repeat (instruction) the splice
trims.

What llama.cpp does with a final assistant message (measured on /v1/chat/completions,
/v1/messages and /v1/responses alike): it continues it -- mid-word: ``"...there lived a
drag"`` goes on ``"oon named Zorath"`` -- but its answer repeats the prefix first (the
stream's first text delta is ``"...there lived a dragoon"``, the non-streamed content
the whole text), which the splice trims. So each chain test runs both ways:
``prefill=True`` (the endpoint continues the final assistant turn) and the instruction (an
assistant turn, then :data:`~streamflow.core.continuation.INSTRUCTION`); the gateway's
upstreams say nothing of prefill and are asked with the instruction.

Run them (about 2.5 minutes; two servers at a time, one thread each)::

    STREAMFLOW_LLAMA_SERVER=.../build/bin/llama-server \
    STREAMFLOW_LLAMA_MODEL=.../SmolLM2-135M-Instruct.Q4_1.gguf \
    python -m pytest tests/live/test_failover_live.py -s
"""

from __future__ import annotations

import signal
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx
import pytest

import streamflow
from streamflow import Endpoint, Failover, Message, UniEvent
from streamflow.app.providers import OpenAIChatProvider
from streamflow.core.continuation import INSTRUCTION, MIN_OVERLAP, WINDOW, overlap
from streamflow.core.outcome import StreamRestart

if TYPE_CHECKING:
    from conftest import LlamaServer  # tests/live/conftest.py

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PROMPT = "Write a long story about a dragon."
MODEL = "smollm2"
MAX_TOKENS = 200
"""Room for an answer of a few seconds on one thread (~50 tokens/s)."""
GREEDY = {"temperature": 0, "seed": 42, "cache_prompt": False}
"""Greedy, and every prompt evaluated whole: llama.cpp's answer to a prompt it has cached
(the oracle's, asked after the chain's) evaluates its last token alone, and the logits
of that other kernel can turn a close greedy choice ~30 tokens in."""
CUT_AFTER = 6
"""The text deltas the consumer sees before the first server is killed or stopped."""
FIRST_CHUNK = 5
"""The frozen server's retry is given up after this; the other server's first chunk (its
prompt read on one thread of a busy machine) comes well within it."""
MODES = [pytest.param(True, id="prefill"), pytest.param(False, id="instruction")]

def endpoint(server: LlamaServer, prefill: bool) -> Endpoint:
    """``server`` as an openai-chat endpoint (continuing a final assistant turn or not)."""
    provider = OpenAIChatProvider(base_url=server.url + "/v1", model=MODEL, api_key="-",
                                  max_tokens=MAX_TOKENS, extra_body=dict(GREEDY))
    return replace(Endpoint.of(provider), prefill=prefill)


def is_text_delta(item: Any) -> bool:
    return (isinstance(item, UniEvent) and item.event_type == "delta"
            and item.content_items[0].type == "text.delta")


def texts(items: list[Any]) -> list[str]:
    """The text deltas' text between continuation notices: one string per stretch."""
    parts = [""]
    for item in items:
        if isinstance(item, StreamRestart):
            parts.append("")
        elif is_text_delta(item):
            parts[-1] += item.content_items[0].text
    return parts


class Cutter:
    """A sink keeping every item; at the ``after``-th text delta it sends ``number`` to
    ``server`` and notes the text so far and the time."""

    def __init__(self, server: LlamaServer, number: int, after: int = CUT_AFTER) -> None:
        self.server = server
        self.number = number
        self.after = after
        self.items: list[Any] = []
        self.deltas = 0
        self.before_cut = ""
        self.started = time.monotonic()
        self.cut_at = 0.0

    def __call__(self, item: Any) -> None:
        self.items.append(item)
        if is_text_delta(item):
            self.deltas += 1
            if self.deltas == self.after:
                self.before_cut = texts(self.items)[0]
                self.server.signal(self.number)
                self.cut_at = time.monotonic()


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


async def direct(server: LlamaServer, messages: list[dict[str, str]],
                 max_tokens: int = MAX_TOKENS) -> tuple[str, Any]:
    """The server's own non-streamed greedy answer to ``messages``: its text and usage."""
    body = {"model": MODEL, "messages": messages, "max_tokens": max_tokens, **GREEDY}
    async with httpx.AsyncClient(timeout=120) as http:
        answer = await http.post(server.url + "/v1/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    return str(data["choices"][0]["message"]["content"]), data["usage"]


async def continuation(server: LlamaServer, first: str, prefill: bool) -> tuple[str, Any]:
    """What ``server`` answers to the continuation of ``first`` the chain asks for, and the
    text the splice then adds to the answer (trimmed of the whitespace the prefill lost,
    or of what repeats the answer's end). llama.cpp's answer to a prefill repeats the
    prefix: it is left out here (what the server continued with)."""
    if prefill:
        kept = first.rstrip()
        text, usage = await direct(server, [user(PROMPT), assistant(kept)])
        assert text.startswith(kept), "llama.cpp no longer repeats the prefill"
        text = text[len(kept):]
        return text[overlap(first[len(kept):], text, len(first) + 1):], usage
    text, usage = await direct(server, [user(PROMPT), assistant(first), user(INSTRUCTION)])
    return text[overlap(first[-WINDOW:], text, MIN_OVERLAP):], usage


def usage_of(record: dict[str, Any]) -> tuple[int, int]:
    usage = record["usage"] or {}
    return usage.get("prompt_tokens") or 0, usage.get("response_tokens") or 0


async def check_answer(message: Message, cutter: Cutter, servers: list[LlamaServer],
                       chain: Failover, prefill: bool, outcomes: list[str],
                       at: list[int]) -> None:
    """The answer is one, from the servers ``at`` (indexes into ``servers``, one per
    attempt), ended by the last one; its text is the first server's, then the second's
    continuation of it."""
    stops = [i for i in cutter.items if isinstance(i, UniEvent) and i.event_type == "stop"]
    assert len(stops) == 1 and stops[0] is cutter.items[-1]
    assert message.complete and message.finish_reason in ("stop", "length")
    delivery = message.delivery
    assert delivery is not None
    attempts = delivery["attempts"]
    assert [a["outcome"] for a in attempts] == outcomes, attempts
    assert [a["endpoint"] for a in attempts] == [chain.endpoints[i].name for i in at]
    notices = [i for i in cutter.items if isinstance(i, StreamRestart)]
    assert len(notices) == len(outcomes) - 1
    assert all(n.groups == 0 and n.discard == 0 for n in notices)  # text is continued
    first, *rest = texts(cutter.items)
    added = "".join(rest)
    assert message.text == first + added  # the message is what the sink was given
    # everything the sink saw before the cut, and what was on its way, is kept; it is
    # the start of the greedy answer (the second server: the same binary and model)
    assert cutter.before_cut and first.startswith(cutter.before_cut)
    whole, _ = await direct(servers[1], [user(PROMPT)], 64)
    assert whole.startswith(first.rstrip())
    # then what the second server continued with, once
    expected, asked_usage = await continuation(servers[1], first, prefill)
    assert expected.strip(), "the second server added nothing"
    assert not added.lstrip().startswith(first.strip()), "the prefix came twice"
    assert added == expected
    # usage: the sum of the attempts' (a cut attempt on openai-chat reports none)
    usage = message.usage
    assert usage is not None
    sums = [usage_of(a) for a in attempts]
    assert (usage.prompt_tokens, usage.response_tokens) == \
        tuple(sum(column) for column in zip(*sums, strict=True))
    assert usage_of(attempts[-1]) == (asked_usage["prompt_tokens"],
                                      asked_usage["completion_tokens"])


def report(what: str, cutter: Cutter, message: Message) -> None:
    """The run's timings (shown with ``pytest -s``)."""
    ended = time.monotonic()
    delivery = message.delivery
    assert delivery is not None
    attempts = [(a["outcome"], (a["error"] or {}).get("type"), a["events"])
                for a in delivery["attempts"]]
    print(f"\n{what}: cut {cutter.cut_at - cutter.started:.2f}s after the request, answer "
          f"done {ended - cutter.cut_at:.2f}s after the cut; {len(message.text)} chars; "
          f"attempts {attempts}; ttft {delivery['ttft_s']}s, stalls {delivery['stalls']}")


@pytest.mark.parametrize("prefill", MODES)
async def test_the_first_server_killed_mid_answer(llama_servers: Any, prefill: bool) -> None:
    """SIGKILL after a few tokens: the body ends early, the second server goes on."""
    servers = llama_servers(2)
    chain = Failover([endpoint(s, prefill) for s in servers], tries=1,
                     first_chunk_timeout=30, stall_timeout=10)
    cutter = Cutter(servers[0], signal.SIGKILL)
    message = await streamflow.run(chain.source(PROMPT), cutter)
    report(f"SIGKILL, prefill={prefill}", cutter, message)
    assert servers[0].process.wait(5) == -signal.SIGKILL
    error = message.delivery["attempts"][0]["error"]  # type: ignore[index]
    assert error["type"] in ("IncompleteStreamError", "TransportError"), error
    await check_answer(message, cutter, servers, chain, prefill, ["cut", "stop"], [0, 1])


@pytest.mark.parametrize("prefill", MODES)
async def test_the_first_server_frozen_mid_answer(llama_servers: Any, prefill: bool) -> None:
    """SIGSTOP after a few tokens: the stall timeout gives up on the silent stream; the
    chain's second try at the same (frozen) server is accepted by its kernel and never
    answered -- not even headers -- so the stall timeout gives up on that too (it bounds
    the wait for headers); the second server goes on."""
    servers = llama_servers(2)
    chain = Failover([endpoint(s, prefill) for s in servers], tries=2,
                     backoff=lambda n: 0.0, first_chunk_timeout=FIRST_CHUNK, stall_timeout=1)
    cutter = Cutter(servers[0], signal.SIGSTOP)
    message = await streamflow.run(chain.source(PROMPT), cutter)
    report(f"SIGSTOP, prefill={prefill}", cutter, message)
    assert servers[0].process.poll() is None  # only frozen
    delivery = message.delivery
    assert delivery is not None
    errors = [a["error"] for a in delivery["attempts"][:2]]
    assert [e["type"] for e in errors] == ["StreamTimeoutError"] * 2, errors
    assert "idle" in errors[0]["message"] and "no response headers" in errors[1]["message"]
    assert delivery["stalls"] == 2
    assert delivery["attempts"][1]["events"] == 0  # the retry gave nothing: "failed"
    await check_answer(message, cutter, servers, chain, prefill, ["cut", "failed", "stop"],
                       [0, 0, 1])


def text_of(chunks: list[Any]) -> str:
    return "".join(x.delta.content or "" for c in chunks for x in c.choices)


async def test_the_gateway_read_by_the_openai_sdk(llama_servers: Any) -> None:
    """The gateway in front of the two (the second as its fallback), read by the official
    openai SDK: the client reads one completion while the first upstream is killed."""
    openai = pytest.importorskip("openai")
    pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
    from security.hostile import serve  # real uvicorn on loopback, in its own thread

    from streamflow.servers.gateway import Upstream, create_app

    servers = llama_servers(2)
    primary = Upstream(servers[0].url + "/v1", "openai-chat")
    fallback = Upstream(servers[1].url + "/v1", "openai-chat")
    chain = Failover([u.endpoint({}) for u in (primary, fallback)], tries=1,
                     first_chunk_timeout=30, stall_timeout=10)
    seen: list[Any] = []  # the gateway's own sink: the answer as the gateway spliced it
    app = create_app(primary, fallbacks=[fallback], failover=chain,
                     sinks=lambda: [seen.append])
    chunks: list[Any] = []
    before_cut, deltas, cut_at = "", 0, 0.0
    started = time.monotonic()
    async with serve(app) as url:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="-", max_retries=0)
        stream = await client.chat.completions.create(
            model=MODEL, messages=[user(PROMPT)], max_tokens=MAX_TOKENS, stream=True,
            stream_options={"include_usage": True}, temperature=GREEDY["temperature"],
            seed=GREEDY["seed"], extra_body={"cache_prompt": GREEDY["cache_prompt"]})
        async for chunk in stream:
            chunks.append(chunk)
            if any(c.delta.content for c in chunk.choices):
                deltas += 1
                if deltas == CUT_AFTER:
                    before_cut = text_of(chunks)
                    servers[0].signal(signal.SIGKILL)
                    cut_at = time.monotonic()
        await client.close()
    ended = time.monotonic()
    text = text_of(chunks)
    # one completion: one id, one finish reason, the usage once, at the end
    assert len({c.id for c in chunks}) == 1
    finishes = [x.finish_reason for c in chunks for x in c.choices if x.finish_reason]
    assert finishes in (["stop"], ["length"]), finishes
    usages = [c.usage for c in chunks if c.usage is not None]
    assert len(usages) == 1 and chunks[-1].usage is usages[0]
    # the gateway's answer: two attempts; the client read its text
    (stop,) = [e for e in seen if isinstance(e, UniEvent) and e.event_type == "stop"]
    assert stop.provider is not None
    attempts = stop.provider["delivery"]["attempts"]
    assert [a["outcome"] for a in attempts] == ["cut", "stop"], attempts
    assert [a["endpoint"] for a in attempts] == [primary.name, fallback.name]
    first, added = texts(seen)
    assert text == first + added
    assert before_cut and first.startswith(before_cut)
    whole, _ = await direct(servers[1], [user(PROMPT)], 64)
    assert whole.startswith(first)
    # the fallback was asked with the instruction: its own answer to that, less the repeat
    expected, asked_usage = await continuation(servers[1], first, prefill=False)
    assert expected.strip(), "the fallback added nothing"
    assert added == expected
    sums = [usage_of(a) for a in attempts]
    assert (usages[0].prompt_tokens, usages[0].completion_tokens) == \
        tuple(sum(column) for column in zip(*sums, strict=True))
    assert sums[-1] == (asked_usage["prompt_tokens"], asked_usage["completion_tokens"])
    print(f"\ngateway: cut {cut_at - started:.2f}s after the request, answer done "
          f"{ended - cut_at:.2f}s after the cut; {len(text)} chars; attempts "
          f"{[(a['outcome'], (a['error'] or {}).get('type'), a['events']) for a in attempts]}")
