"""The demo's loopback provider: the replay server answering like the real API would.

:class:`DemoServer` is a :class:`~streamflow.servers.replay.ReplayServer` that picks the
response from the request body, as a provider does: a request without a tool result
gets turn 1 (thinking, a sentence, a ``get_weather`` call); a request that carries
the result of that call gets turn 2 (the answer). A turn-2 request is checked the
way the real API checks it -- the assistant turn must come back with the call's id
(and, for Anthropic, the signed thinking block), and every call needs its result --
otherwise the answer is the provider's own 400 error envelope. Each SSE event is one
HTTP chunk, sent after a realistic pause (a longer one before the first event, the
"time to first token"), or at once with ``fast=True``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from ..servers.replay import Hit, ReplayServer, Route
from . import recording

__all__ = ["DEMO_PATHS", "DemoServer", "check_turn2", "demo_delays", "event_chunks"]

DEMO_PATHS = {"anthropic": "/v1/messages", "openai-chat": "/v1/chat/completions"}
_EVENT_END = re.compile(rb"\r?\n\r?\n")


def event_chunks(body: bytes) -> list[bytes]:
    """``body`` cut after each SSE event's blank line (one chunk per event)."""
    chunks: list[bytes] = []
    start = 0
    for match in _EVENT_END.finditer(body):
        chunks.append(body[start:match.end()])
        start = match.end()
    if start < len(body):
        chunks.append(body[start:])
    return chunks


def demo_delays(count: int, *, first: float = 0.45, low: float = 0.01, high: float = 0.04,
                seed: int = 2024) -> list[float]:
    """Pauses before each of ``count`` events: ``first``, then ``low``..``high`` seconds."""
    rng = random.Random(seed)
    return [first if i == 0 else rng.uniform(low, high) for i in range(count)]


def _error(dialect: str, status: int, message: str) -> Route:
    if dialect == "anthropic":
        payload: dict[str, Any] = {"type": "error", "error": {
            "type": "invalid_request_error", "message": message}}
    else:
        payload = {"error": {"message": message, "type": "invalid_request_error",
                             "code": status}}
    return Route.error(status, payload)


def _turn1_calls(dialect: str) -> tuple[list[str], str | None]:
    """The call ids of the bundled turn 1 and its thinking signature (Anthropic)."""
    from ..wire.decoder import assemble

    message = assemble(recording(dialect, 1), dialect)
    signature = next((i.fidelity.get("signature") for i in message.items
                      if i.kind == "thinking" and i.fidelity), None)
    return [c.tool_call_id for c in message.tool_calls], signature


def tool_result_ids(dialect: str, body: Mapping[str, Any]) -> list[str]:
    """The tool-call ids of every tool result in a request body, read by the dialect's
    request side (``[]`` for a first turn, or a body it refuses: the API answers that)."""
    from ..core.errors import RequestError
    from ..core.requests import ToolResultPart
    from ..wire.dialects import get_request

    parse = get_request(dialect).parse
    try:
        turns = parse(body).turns if parse is not None else []
    except RequestError:
        return []
    return [p.tool_call_id for t in turns for p in t.parts if isinstance(p, ToolResultPart)]


def check_turn2(dialect: str, body: Mapping[str, Any]) -> str | None:
    """Why a request carrying tool results would be refused by the API, or ``None``."""
    calls, signature = _turn1_calls(dialect)
    results = tool_result_ids(dialect, body)
    assistant = [m for m in body.get("messages") or []
                 if isinstance(m, Mapping) and m.get("role") == "assistant"]
    if not assistant:
        return "tool results without the assistant turn that made the calls"
    last = assistant[-1]
    if dialect == "anthropic":
        content = last.get("content")
        blocks: list[Any] = content if isinstance(content, list) else []
        made = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        signed = [b.get("signature") for b in blocks if b.get("type") == "thinking"]
    else:
        made = [c.get("id") for c in last.get("tool_calls") or []]
        signed = [d.get("signature") for d in last.get("reasoning_details") or []
                  if d.get("signature")]
    if signature and signed != [signature]:
        return ("the assistant turn must carry its signed reasoning back unchanged "
                "(a thinking block with its signature) when it made tool calls")
    if made != calls:
        return f"the assistant turn must repeat the tool calls {calls}, got {made}"
    if sorted(results) != sorted(calls):
        return f"each tool call needs exactly one result: calls {calls}, results {results}"
    return None


class DemoServer(ReplayServer):
    """Replays the bundled ``dialect`` conversation, turn chosen by the request body."""

    def __init__(self, dialect: str = "anthropic", *, fast: bool = False) -> None:
        if dialect not in DEMO_PATHS:
            raise ValueError(f"no demo recording for dialect {dialect!r}")
        self.dialect = dialect
        self.path = DEMO_PATHS[dialect]
        self._turns: dict[int, Route] = {}
        for turn in (1, 2):
            chunks = event_chunks(recording(dialect, turn))
            delays = [0.0] * len(chunks) if fast else demo_delays(
                len(chunks), first=0.45 if turn == 1 else 0.6, seed=turn)
            self._turns[turn] = Route(chunks=chunks, delays=delays)
        super().__init__({self.path: self._turns[1]})

    @property
    def base_url(self) -> str:
        """The base URL a provider's request builder should use."""
        return self.url if self.dialect == "anthropic" else self.url + "/v1"

    def route_for(self, path: str, hit: Hit | None = None) -> Route:
        """Turn 1, turn 2 or a 400, from the body of the request being answered."""
        route = super().route_for(path, hit)
        if path.split("?", 1)[0] != self.path or hit is None:
            return route
        try:
            body = hit.json()
        except ValueError:
            return _error(self.dialect, 400, "the request body is not JSON")
        if not isinstance(body, dict) or body.get("stream") is not True:
            return _error(self.dialect, 400, "the demo server only answers streaming requests")
        if not tool_result_ids(self.dialect, body):
            return self._turns[1]
        problem = check_turn2(self.dialect, body)
        return _error(self.dialect, 400, problem) if problem else self._turns[2]
