"""Seeded workload generators: SSE bodies, their chunking, and the message they must assemble to.

Every body is generated from a seed, so a run is reproducible byte for byte:

* :func:`anthropic_mixed` -- ``message_start``, ``ping``, a thinking block of N
  ``thinking_delta`` + one ``signature_delta``, a text block of M ``text_delta`` of
  1-5 characters (with CJK and emoji), a ``tool_use`` block whose input arrives as
  K ``input_json_delta``, ``message_delta`` with usage, ``message_stop``;
* :func:`openai_mixed` -- N ``reasoning`` chunks (each with its ``reasoning_details``
  twin, as OpenRouter sends them), M content chunks, two parallel tool calls whose
  argument fragments interleave by index, the finish chunk, a usage chunk with
  ``cost``, ``[DONE]``;
* :func:`anthropic_growth` / :func:`openai_growth` -- one tool argument of a given
  size in 1-10 character fragments.

Each returns a :class:`Workload`: the body, the number of wire events, and an
:class:`Expected` message summary the tests check every path against.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

__all__ = [
    "Expected",
    "Workload",
    "anthropic_growth",
    "anthropic_mixed",
    "chunked",
    "human_size",
    "openai_growth",
    "openai_mixed",
]

_WORDS = (
    "stream", "event", "parser", "token", "delta", "frame", "buffer", "linear", "reactive",
    "sink", "the", "of", "a", "and", "to", "is", "流式", "事件", "解析", "工具调用", "思考",
    "🙂", "🚀", "✨", "👩‍💻", "é", "ß", "—", "“ok”", "\\n", "tab\t", "line\n",
)


@dataclass(slots=True)
class Expected:
    """What the body must assemble to (the fields every path is checked on)."""

    text: str = ""
    thinking: str = ""
    signature: str = ""
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str = ""
    response_tokens: int = 0


@dataclass(slots=True)
class Workload:
    """One generated stream: its name, dialect, body bytes, wire-event count and expectation."""

    name: str
    dialect: str
    body: bytes
    events: int
    expected: Expected
    payloads: list[bytes] = field(default_factory=list)  # the JSON ``data`` payloads


def chunked(body: bytes, seed: int, low: int = 1, high: int = 400) -> list[bytes]:
    """``body`` cut into chunks of random sizes in ``[low, high]`` (seeded)."""
    rng = random.Random(seed)
    out: list[bytes] = []
    pos, size = 0, len(body)
    while pos < size:
        step = rng.randint(low, high)
        out.append(body[pos:pos + step])
        pos += step
    return out


def _pieces(rng: random.Random, count: int, low: int, high: int) -> list[str]:
    """``count`` text fragments of ``low``-``high`` characters drawn from mixed-script words."""
    out = []
    for _ in range(count):
        size = rng.randint(low, high)
        piece = ""
        while len(piece) < size:
            piece += rng.choice(_WORDS) + (" " if rng.random() < 0.5 else "")
        out.append(piece[:size])
    return out


def _split(text: str, rng: random.Random, count: int | None = None,
           low: int = 1, high: int = 10) -> list[str]:
    """``text`` cut into ``count`` non-empty fragments, or into fragments of ``low``-``high``."""
    if count is not None:
        cuts = sorted(rng.sample(range(1, len(text)), count - 1))
        bounds = [0, *cuts, len(text)]
        return [text[a:b] for a, b in pairwise(bounds)]
    out, pos = [], 0
    while pos < len(text):
        step = rng.randint(low, high)
        out.append(text[pos:pos + step])
        pos += step
    return out


def tool_input(rng: random.Random, size: int) -> dict[str, Any]:
    """A realistic tool-argument object whose compact JSON is about ``size`` characters."""
    edits: list[dict[str, Any]] = []
    body: dict[str, Any] = {"path": "src/streamflow/app.py", "create": False, "mode": 0o644,
                            "edits": edits, "content": ""}
    budget = size - len(_dumps(body))
    line = 0
    while budget > 0:
        line += 1
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 9)))
        edit = {"line": line, "text": text, "score": round(rng.random(), 4), "keep": line % 3 == 0}
        cost = len(_dumps(edit)) + 1
        if cost > budget:
            body["content"] = "x" * max(budget - 2, 0)
            break
        edits.append(edit)
        budget -= cost
    return body


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Body:
    """Collects SSE events and their JSON payloads."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.payloads: list[bytes] = []
        self.events = 0

    def sse(self, data: Any, event: str | None = None) -> None:
        payload = data if isinstance(data, str) else _dumps(data)
        head = f"event: {event}\n" if event else ""
        self.parts.append(f"{head}data: {payload}\n\n")
        if payload != "[DONE]":
            self.payloads.append(payload.encode())
        self.events += 1

    def workload(self, name: str, dialect: str, expected: Expected) -> Workload:
        return Workload(name, dialect, "".join(self.parts).encode(), self.events, expected,
                        self.payloads)


# -- Anthropic -----------------------------------------------------------------------------

def _a_start(b: _Body) -> None:
    b.sse({"type": "message_start", "message": {
        "id": "msg_bench01", "type": "message", "role": "assistant", "model": "claude-bench-4",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1234, "output_tokens": 1, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0}}}, "message_start")
    b.sse({"type": "ping"}, "ping")


def _a_delta(b: _Body, index: int, delta: dict[str, Any]) -> None:
    b.sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")


def _a_tool(b: _Body, index: int, call_id: str, name: str, fragments: list[str]) -> None:
    b.sse({"type": "content_block_start", "index": index, "content_block": {
        "type": "tool_use", "id": call_id, "name": name, "input": {}}}, "content_block_start")
    for frag in fragments:
        _a_delta(b, index, {"type": "input_json_delta", "partial_json": frag})
    b.sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def _a_end(b: _Body, output_tokens: int) -> None:
    b.sse({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
           "usage": {"output_tokens": output_tokens}}, "message_delta")
    b.sse({"type": "message_stop"}, "message_stop")


def anthropic_mixed(seed: int = 1, thinking: int = 2000, text: int = 5000, tool: int = 2000,
                    tool_bytes: int = 60_000) -> Workload:
    """The Anthropic workload of the issue (about 9,011 events with the defaults)."""
    rng = random.Random(seed)
    b = _Body()
    _a_start(b)
    b.sse({"type": "content_block_start", "index": 0,
           "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
          "content_block_start")
    thoughts = _pieces(rng, thinking, 4, 24)
    for piece in thoughts:
        _a_delta(b, 0, {"type": "thinking_delta", "thinking": piece})
    signature = "".join(rng.choice(string.ascii_letters + string.digits + "+/")
                        for _ in range(344))
    _a_delta(b, 0, {"type": "signature_delta", "signature": signature})
    b.sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    b.sse({"type": "content_block_start", "index": 1,
           "content_block": {"type": "text", "text": ""}}, "content_block_start")
    words = _pieces(rng, text, 1, 5)
    for piece in words:
        _a_delta(b, 1, {"type": "text_delta", "text": piece})
    b.sse({"type": "content_block_stop", "index": 1}, "content_block_stop")
    args = tool_input(rng, tool_bytes)
    _a_tool(b, 2, "toolu_bench01", "write_file", _split(_dumps(args), rng, count=tool))
    tokens = thinking + text + tool
    _a_end(b, tokens)
    exp = Expected("".join(words), "".join(thoughts), signature,
                   [("toolu_bench01", "write_file", args)], "tool_call", tokens)
    return b.workload("anthropic", "anthropic", exp)


def anthropic_growth(size: int, seed: int = 7) -> Workload:
    """One Anthropic ``tool_use`` whose ``size``-character input arrives in 1-10 char fragments."""
    rng = random.Random(seed + size)
    b = _Body()
    _a_start(b)
    args = tool_input(rng, size)
    _a_tool(b, 0, "toolu_growth", "write_file", _split(_dumps(args), rng))
    _a_end(b, size // 4)
    exp = Expected(tool_calls=[("toolu_growth", "write_file", args)], finish_reason="tool_call",
                   response_tokens=size // 4)
    return b.workload(f"anthropic-{human_size(size)}", "anthropic", exp)


# -- OpenAI chat ----------------------------------------------------------------------------

_OAI_HEAD = {"id": "gen-bench-0001", "object": "chat.completion.chunk", "created": 1790000000,
             "model": "openai/gpt-bench"}


def _o_chunk(b: _Body, delta: dict[str, Any], finish: str | None = None) -> None:
    b.sse({**_OAI_HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def _o_end(b: _Body, tokens: int) -> None:
    _o_chunk(b, {}, "tool_calls")
    b.sse({**_OAI_HEAD, "choices": [], "usage": {
        "prompt_tokens": 1234, "completion_tokens": tokens, "total_tokens": 1234 + tokens,
        "completion_tokens_details": {"reasoning_tokens": tokens // 3},
        "cost": 0.004217, "cost_details": {"upstream_inference_cost": 0.004217}}})
    b.sse("[DONE]")


def _o_open(b: _Body, index: int, call_id: str, name: str) -> None:
    _o_chunk(b, {"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                 "function": {"name": name, "arguments": ""}}]})


def _o_args(b: _Body, index: int, fragment: str) -> None:
    _o_chunk(b, {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


def openai_mixed(seed: int = 2, reasoning: int = 2000, content: int = 5000, tool: int = 1000,
                 tool_bytes: int = 30_000) -> Workload:
    """The OpenAI chat workload of the issue (about 9,005 events with the defaults)."""
    rng = random.Random(seed)
    b = _Body()
    thoughts = _pieces(rng, reasoning, 4, 24)
    for i, piece in enumerate(thoughts):
        delta: dict[str, Any] = {"role": "assistant"} if i == 0 else {}
        delta["content"] = ""
        delta["reasoning"] = piece
        delta["reasoning_details"] = [{"type": "reasoning.text", "text": piece,
                                       "format": "unknown", "index": 0}]
        _o_chunk(b, delta)
    words = _pieces(rng, content, 1, 5)
    for piece in words:
        _o_chunk(b, {"content": piece})
    calls = [("call_bench_a", "write_file", tool_input(rng, tool_bytes)),
             ("call_bench_b", "search_code", tool_input(rng, tool_bytes))]
    frags = [_split(_dumps(args), rng, count=tool) for _, _, args in calls]
    for index, (call_id, name, _) in enumerate(calls):
        _o_open(b, index, call_id, name)
    for a, c in zip(frags[0], frags[1], strict=True):
        _o_args(b, 0, a)
        _o_args(b, 1, c)
    tokens = reasoning + content + 2 * tool
    _o_end(b, tokens)
    exp = Expected("".join(words), "".join(thoughts), "", list(calls), "tool_call", tokens)
    return b.workload("openai-chat", "openai-chat", exp)


def openai_growth(size: int, seed: int = 8) -> Workload:
    """One OpenAI chat tool call: ``size``-character arguments in 1-10 character fragments."""
    rng = random.Random(seed + size)
    b = _Body()
    args = tool_input(rng, size)
    _o_open(b, 0, "call_growth", "write_file")
    for frag in _split(_dumps(args), rng):
        _o_args(b, 0, frag)
    _o_end(b, size // 4)
    exp = Expected(tool_calls=[("call_growth", "write_file", args)], finish_reason="tool_call",
                   response_tokens=size // 4)
    return b.workload(f"openai-chat-{human_size(size)}", "openai-chat", exp)


def human_size(size: int) -> str:
    """``10KB``, ``1MB``: a size as the workload names spell it."""
    return f"{size // 1_000_000}MB" if size >= 1_000_000 else f"{size // 1000}KB"
