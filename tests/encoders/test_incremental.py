"""Encoders write as the events arrive: a fragment's bytes are out by the next event.

The lookahead each target needs is bounded and named in docs/ENCODERS.md: openai-chat
holds one thinking fragment; whole-value items (Gemini/Ollama tool calls, Anthropic
redacted thinking, binary data) go out at their group's ``.done``. Text is never held.
"""

from __future__ import annotations

import json

import pytest
from builders import call, stream, text, thinking
from corpus import TARGETS, read_back

from streamflow.core.events import Usage
from streamflow.wire.dialects import get_encoder

WORDS = [f"w{n}-" for n in range(50)]


@pytest.mark.parametrize("target", TARGETS)
def test_every_text_fragment_is_written_when_it_arrives(target: str) -> None:
    enc = get_encoder(target)()
    for event in stream(text(*WORDS)):
        out = enc.feed(event)
        item = event.item
        if item is not None and item.type == "text.delta":
            assert json.dumps(item.text)[1:-1].encode() in out, target


@pytest.mark.parametrize("target", TARGETS)
def test_thinking_and_arguments_wait_at_most_for_their_group(target: str) -> None:
    enc = get_encoder(target)()
    written = b""
    events = stream(thinking("a1-", "a2-", "a3-"), call("f", "c1", '{"k":', ' "v1-"}'))
    for n, event in enumerate(events):
        written += enc.feed(event)
        item = event.item
        if item is not None and item.type == "thinking.done" and target != "ollama":
            assert b"a1-" in written and b"a3-" in written
        if item is not None and item.type == "tool_call.done":
            assert b"v1-" in written, target
        if n == 1 and target not in ("openai-chat",):  # no lookahead: out at once
            assert b"a1-" in written, target


def test_openai_chat_leaves_the_usage_chunk_out_when_asked() -> None:
    events = stream(text("hi"), usage=Usage(prompt_tokens=3, response_tokens=1))
    enc = get_encoder("openai-chat")(include_usage=False)
    body = b"".join(enc.feed(e) for e in events)
    assert b'"usage"' not in body and body.endswith(b"data: [DONE]\n\n")
    assert read_back(body, "openai-chat").message.text == "hi"
