"""A fake upstream that continues what it is asked to, in any dialect, and fails as told.

``Model(dialect, faults)`` is a :class:`~streamflow.servers.replay.ReplayServer` responder:
for each request it reads the prefix the request carries -- as a model would: the final
assistant turn (a prefill) or an assistant turn followed by a request to go on, written
in the request's own dialect, read here by hand, not by streamflow's parsers -- and
streams the rest of :data:`ANSWER` (a thinking block, a sentence, a tool call) in that
dialect, with the fault of its attempt applied:

* ``"cut-text"``, ``"cut-args"``, ``"cut-thinking"`` -- the body ends in the middle of
  a frame inside that group (the connection dropped, ``reset``);
* ``"stall"`` -- the body stops sending before that group (for a stall timeout);
* ``"529"`` -- an overloaded error before any byte (Anthropic's 529 envelope or the
  dialect's 503);
* ``None`` -- the whole rest, to its end.

A request that carries the tool's result is answered with :data:`FINAL` (an agent's
second turn).

Import as ``from failover_model import ...`` (``tests/`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from streamflow.core.continuation import INSTRUCTION
from streamflow.core.events import TextItem, ThinkingItem, ToolCallItem, UniEvent, Usage
from streamflow.faults import Cut, Stall, fault_route
from streamflow.servers.replay import Hit, Route
from streamflow.wire.dialects import get_encoder
from streamflow.wire.dialects.encoder import BodyWriter

DIALECTS = ("anthropic", "openai-chat", "openai-responses", "gemini")
PATHS = {"anthropic": "/v1/messages", "openai-chat": "/v1/chat/completions",
         "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/m:streamGenerateContent"}
BASE = {"anthropic": "", "openai-chat": "/v1", "openai-responses": "/v1", "gemini": ""}
"""What a dialect's base URL ends with (OpenAI's includes ``/v1``)."""

THINKING = "The user wants the weather; Paris is the city to look up."
TEXT = ("Paris is the capital of France. Its weather in spring is mild, with showers "
        "and bright spells; let me look up today's.")
CALL = ("get_weather", "call_w1", '{"city": "Paris", "unit": "celsius"}')
ANSWER = (THINKING, TEXT, CALL)
FINAL = "It is 18 °C and sunny in Paris."
"""The answer to a request that carries the tool's result."""


def _pieces(value: str, size: int) -> list[str]:
    return [value[i:i + size] for i in range(0, len(value), size)] or [""]


def answer_events(kept: str | None, prompt_tokens: int) -> list[UniEvent]:
    """The rest of the answer after ``kept`` (the text a prefix carried; ``None``: the
    whole answer, its thinking included), as the events a model's stream decodes to."""
    events: list[UniEvent] = []
    if kept is None:
        signature = {"signature": "sig-" + str(len(THINKING))}
        events += [UniEvent("delta", [ThinkingItem("thinking.delta", p)])
                   for p in _pieces(THINKING, 9)]
        events += [UniEvent("delta", [ThinkingItem("thinking.delta", "", signature)]),
                   UniEvent("delta", [ThinkingItem("thinking.done", THINKING, signature)])]
        rest = TEXT
    else:
        assert TEXT.startswith(kept), (kept, TEXT)
        rest = TEXT[len(kept):]
    if rest:
        events += [UniEvent("delta", [TextItem("text.delta", p)]) for p in _pieces(rest, 7)]
        events.append(UniEvent("delta", [TextItem("text.done", rest)]))
    name, call_id, arguments = CALL
    fragments = _pieces(arguments, 5)
    events += [UniEvent("delta", [ToolCallItem("tool_call.delta", name if i == 0 else "",
                                               call_id if i == 0 else "", p)])
               for i, p in enumerate(fragments)]
    events.append(UniEvent("delta", [ToolCallItem("tool_call.done", name, call_id,
                                                  json.loads(arguments))]))
    events.append(UniEvent("stop", [], Usage(prompt_tokens=prompt_tokens, response_tokens=40),
                           "tool_call"))
    if events[0].event_type == "delta":
        events[0] = UniEvent("delta", events[0].content_items,
                             provider={"id": f"resp-{prompt_tokens}", "model": "m"})
    return events


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for block in content or ():
        if isinstance(block, dict) and isinstance(block.get("text"), str) \
                and not block.get("thought") and block.get("type") not in ("thinking",):
            out.append(block["text"])
    return "".join(out)


def read_prefix(dialect: str, body: dict[str, Any]) -> tuple[str, str | None]:
    """``(mode, kept text)`` of a request: ``("none", None)``, ``("prefill", text)`` or
    ``("instruction", text)`` -- read from the body as the dialect writes it."""
    if dialect == "gemini":
        turns = [(c.get("role"), c.get("parts")) for c in body["contents"]]
        assistant = "model"
    elif dialect == "openai-responses":
        turns = [(i.get("role"), i.get("content")) for i in body["input"]
                 if i.get("type", "message") == "message"]
        assistant = "assistant"
    else:
        turns = [(m.get("role"), m.get("content")) for m in body["messages"]]
        assistant = "assistant"
    if turns[-1][0] == assistant:
        return "prefill", _text_of(turns[-1][1])
    if len(turns) >= 2 and turns[-2][0] == assistant and _text_of(turns[-1][1]) == INSTRUCTION:
        return "instruction", _text_of(turns[-2][1])
    return "none", None


def has_result(dialect: str, body: dict[str, Any]) -> bool:
    """Whether the request carries a tool result (the turn after the call)."""
    if dialect == "gemini":
        return any("functionResponse" in p for c in body["contents"] for p in c.get("parts", ()))
    if dialect == "openai-responses":
        return any(i.get("type") == "function_call_output" for i in body["input"])
    if dialect == "openai-chat":
        return any(m.get("role") == "tool" for m in body["messages"])
    return any(isinstance(m.get("content"), list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
        for m in body["messages"])


def final_events(prompt_tokens: int) -> list[UniEvent]:
    """The answer after the tool's result: :data:`FINAL`, then the stop."""
    return [UniEvent("delta", [TextItem("text.delta", p)], provider=None if i else
                     {"id": f"final-{prompt_tokens}", "model": "m"})
            for i, p in enumerate(_pieces(FINAL, 6))] + [
        UniEvent("delta", [TextItem("text.done", FINAL)]),
        UniEvent("stop", [], Usage(prompt_tokens=prompt_tokens, response_tokens=9), "stop")]


def _overloaded(dialect: str) -> Route:
    if dialect == "anthropic":
        return Route.error(529, {"type": "error", "error": {"type": "overloaded_error",
                                                            "message": "Overloaded"}})
    return Route.error(503, {"error": {"message": "The service is overloaded",
                                       "type": "server_error", "code": 503}},
                       headers={"retry-after": "0"})


@dataclass
class Model:
    """One endpoint (see the module doc): ``faults[i]`` is attempt ``i``'s."""

    dialect: str
    faults: list[str | None] = field(default_factory=list)
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    delay: float = 0.0  # seconds before each chunk: a model that takes its time

    def __call__(self, hit: Hit) -> Route:
        attempt = len(self.asked)
        fault = self.faults[attempt] if attempt < len(self.faults) else None
        body = hit.json()
        mode, kept = read_prefix(self.dialect, body)
        self.asked.append((mode, kept))
        if fault == "529":
            return _overloaded(self.dialect)
        if has_result(self.dialect, body):
            events = final_events(200 + attempt)
        else:
            events = answer_events(None if mode == "none" else kept, 100 + attempt)
        writer = BodyWriter(get_encoder(self.dialect)())
        chunks = [writer.feed(e) for e in events]
        tail, _ = writer.close(None)
        chunks[-1] += tail
        if fault is None:
            return Route(chunks=[c for c in chunks if c], delays=self.delay)
        kind = {"cut-text": TextItem, "cut-args": ToolCallItem,
                "cut-thinking": ThinkingItem, "stall": TextItem}[fault]
        hits = [i for i, e in enumerate(events)
                if e.content_items and isinstance(e.content_items[0], kind) and chunks[i]]
        target = hits[len(hits) // 2]  # a frame in the middle of the group
        if fault == "stall":  # nothing more from the middle of the text on
            kept = [c for c in chunks[:target] if c]
            return fault_route([*kept, *(c for c in chunks[target:] if c)],
                               Stall(30.0, before=len(kept)))
        offset = sum(len(c) for c in chunks[:target]) + len(chunks[target]) // 2
        return fault_route(b"".join(chunks), Cut(offset, reset=True))
