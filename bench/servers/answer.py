"""The answer the loopback upstream streams, and how a client finds the stamps in it.

Each text delta's text is ``[<perf_counter_ns>.<seq>]`` (padded with ``x`` to the
configured size): the moment the upstream wrote it and its index in the stream.
``CLOCK_MONOTONIC`` is shared by every process on Linux, so a client in another
process subtracts the stamp from its own ``perf_counter_ns()`` on arrival. The
stamp survives any re-encoding (a JSON string keeps ``[``, ``.``, digits and
``]`` as they are), so the same pattern finds it in every dialect a client reads;
the sequence number lets a client count distinct events even where a path
coalesces deltas or repeats the text in a closing event.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass

__all__ = ["API_KEY", "STAMP", "Shape", "Route", "ROUTES", "anthropic_answer", "chat_answer",
           "request_body", "request_headers"]

API_KEY = "sk-" + secrets.token_hex(32)
"""The key clients send; LiteLLM's master key (it refuses to start without a strong one)."""

STAMP = re.compile(rb"\[(\d{9,})\.(\d+)\]")
"""A delta's stamp: group 1 the write time (ns), group 2 the event's index."""


@dataclass(frozen=True, slots=True)
class Shape:
    """What one upstream answer looks like: ``events`` text deltas, ``per_chunk`` of them
    written together every ``gap`` seconds, each delta's text ``size`` bytes (at least
    the stamp)."""

    events: int = 200
    gap: float = 0.005
    size: int = 32
    per_chunk: int = 1

    def to_json(self) -> bytes:
        """The shape as the upstream's ``/_config`` endpoint takes it."""
        return json.dumps(asdict(self)).encode()


def _text(stamp: int, seq: int, size: int) -> str:
    mark = f"[{stamp}.{seq}]"
    return mark + "x" * (size - len(mark))


class _Answer:
    """One dialect's answer: a head, a delta per event, a tail."""

    head: bytes
    tail: bytes

    def delta(self, stamp: int, seq: int, size: int) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError


def _data(obj: object) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _event(kind: str, obj: object) -> bytes:
    return f"event: {kind}\n".encode() + _data(obj)


class _Chat(_Answer):
    """OpenAI chat completions: ``chat.completion.chunk`` frames, then ``data: [DONE]``."""

    def __init__(self) -> None:
        self.head = _data(self._chunk({"role": "assistant", "content": ""}, None))
        self.tail = (_data(self._chunk({}, "stop")) + _data({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
            "model": "bench", "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
            + b"data: [DONE]\n\n")

    @staticmethod
    def _chunk(delta: dict[str, str], finish: str | None) -> dict[str, object]:
        return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
                "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def delta(self, stamp: int, seq: int, size: int) -> bytes:
        return _data(self._chunk({"content": _text(stamp, seq, size)}, None))


class _Messages(_Answer):
    """Anthropic Messages: ``message_start`` ... ``content_block_delta`` ... ``message_stop``."""

    def __init__(self) -> None:
        self.head = _event("message_start", {"type": "message_start", "message": {
            "id": "msg_bench", "type": "message", "role": "assistant", "model": "bench",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}) + _event(
            "content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}})
        self.tail = _event("content_block_stop", {"type": "content_block_stop", "index": 0}) \
            + _event("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": "end_turn",
                                                 "stop_sequence": None},
                                       "usage": {"output_tokens": 1}}) \
            + _event("message_stop", {"type": "message_stop"})

    def delta(self, stamp: int, seq: int, size: int) -> bytes:
        return _event("content_block_delta", {
            "type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": _text(stamp, seq, size)}})


chat_answer = _Chat()
anthropic_answer = _Messages()


@dataclass(frozen=True, slots=True)
class Route:
    """A client dialect's endpoint in front of an upstream dialect."""

    name: str
    client: str  # "openai-chat" or "anthropic": what the client sends and reads
    upstream: str  # the upstream's dialect

    @property
    def path(self) -> str:
        """The endpoint the client posts to."""
        return "/v1/chat/completions" if self.client == "openai-chat" else "/v1/messages"


ROUTES = {route.name: route for route in (
    Route("chat", "openai-chat", "openai-chat"),  # pass-through
    Route("messages>chat", "anthropic", "openai-chat"),  # translation
    Route("messages", "anthropic", "anthropic"),  # pass-through
    Route("chat>messages", "openai-chat", "anthropic"),  # translation
)}
"""The shared routes: ``chat`` and ``messages`` pass through, the others translate."""


def request_body(route: Route) -> bytes:
    """The streaming request a client sends on ``route`` (the model names the upstream's
    dialect: LiteLLM routes by it, the gateway forwards it, the upstream ignores it)."""
    model = "bench-openai" if route.upstream == "openai-chat" else "bench-anthropic"
    messages = [{"role": "user", "content": "hi"}]
    if route.client == "anthropic":
        return json.dumps({"model": model, "max_tokens": 1024, "stream": True,
                           "messages": messages}).encode()
    return json.dumps({"model": model, "stream": True, "messages": messages}).encode()


def request_headers() -> dict[str, str]:
    """Headers both SDKs would send (a key for whichever the path checks)."""
    return {"content-type": "application/json", "authorization": f"Bearer {API_KEY}",
            "x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
