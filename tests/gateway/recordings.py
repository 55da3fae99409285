"""The upstream recordings the gateway tests replay: a tool turn and the answer after it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from streamflow import Message, assemble
from streamflow.core.events import InlineThinkingItem, ThinkingItem, ToolCallItem

DATA = Path(__file__).resolve().parent.parent / "data"
MODEL = {"anthropic": "claude-sonnet-4-5", "openai-chat": "anthropic/claude-sonnet-4.5",
         "openai-responses": "gpt-5-mini", "gemini": "gemini-2.5-flash"}
PATHS = {"anthropic": "/v1/messages", "openai-chat": "/v1/chat/completions",
         "openai-responses": "/v1/responses",
         "gemini": f"/v1beta/models/{MODEL['gemini']}:streamGenerateContent"}


def _demo(name: str) -> bytes:
    return (resources.files("streamflow.wire.recordings") / name).read_bytes()


def turn_bodies(dialect: str) -> tuple[bytes, bytes]:
    """``(tool turn, answer turn)`` bodies of ``dialect``: thinking, signatures, tool calls."""
    if dialect == "anthropic":
        return _demo("anthropic-turn1.sse"), _demo("anthropic-turn2.sse")
    if dialect == "openai-chat":
        return _demo("openai-chat-turn1.sse"), _demo("openai-chat-turn2.sse")
    if dialect == "openai-responses":
        return ((DATA / "openai_responses" / "reasoning_parallel_tools.sse").read_bytes(),
                (DATA / "gateway" / "responses_answer.sse").read_bytes())
    return ((DATA / "gemini" / "thinking_parallel_calls.sse").read_bytes(),
            (DATA / "gateway" / "gemini_answer.sse").read_bytes())


def turn_messages(dialect: str) -> tuple[Message, Message]:
    """The two turns as streamflow assembles them straight from the upstream bytes."""
    first, second = turn_bodies(dialect)
    return assemble(first, dialect), assemble(second, dialect)


def replay_state(message: Message, *, ids: bool = False) -> list[Any]:
    """What an upstream needs back: signatures, encrypted reasoning, calls (``ids``: with ids)."""
    out: list[Any] = []
    for item in message.items:
        if isinstance(item, ThinkingItem) and item.fidelity:
            out.append(item.fidelity)
        elif isinstance(item, InlineThinkingItem):
            out.append((item.data, item.fidelity))
        elif isinstance(item, ToolCallItem):
            call = (item.name, item.arguments, item.fidelity)
            out.append((item.tool_call_id, *call) if ids else call)
    return out
