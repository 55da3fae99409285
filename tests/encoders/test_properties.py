"""Hypothesis properties of every encoder, on generated grammar-valid UniEvent streams.

* decode(encode(events)) carries the same text, thinking, tool calls, usage, finish
  reason and signatures (``uni``: the very same events);
* every ``feed`` writes whole frames (SSE events / NDJSON lines), so bytes can be
  flushed as they come, and any chunking of the body decodes to the same message.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from builders import stream
from corpus import TARGETS, opaque, read_back, summary
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamflow.core.events import ContentItem, TextItem, ThinkingItem, ToolCallItem, Usage
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import get_encoder

pieces = st.lists(st.text(max_size=12), min_size=1, max_size=4)
signatures = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode())
json_values = st.one_of(st.integers(-5, 10**6), st.text(max_size=8), st.booleans())


@st.composite
def groups(draw: Any) -> list[ContentItem]:
    kind = draw(st.sampled_from(["text", "thinking", "call"]))
    if kind == "text":
        return [TextItem("text.delta", p) for p in draw(pieces)]
    if kind == "thinking":
        out: list[ContentItem] = [ThinkingItem("thinking.delta", p) for p in draw(pieces)]
        if draw(st.booleans()):
            out.append(ThinkingItem("thinking.delta", "", {"signature": draw(signatures)}))
        return out
    args = draw(st.dictionaries(st.text("abcxyz", min_size=1, max_size=4), json_values,
                                max_size=3))
    text = json.dumps(args) if args else ""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=3)))
    frags = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    n = draw(st.integers(0, 10**6))
    return [ToolCallItem("tool_call.delta", draw(st.sampled_from(["get", "put_x"])),
                         f"call_{n}", frags[0]),
            *(ToolCallItem("tool_call.delta", "", "", f) for f in frags[1:])]


@st.composite
def streams(draw: Any) -> list:
    gs = draw(st.lists(groups(), max_size=5))
    calls = any(isinstance(g[0], ToolCallItem) for g in gs)
    finish = "tool_call" if calls else draw(st.sampled_from(["stop", "length", "unknown"]))
    thoughts = draw(st.integers(0, 9))  # response_tokens includes the reasoning
    u = Usage(prompt_tokens=draw(st.integers(1, 10**5)), response_tokens=draw(
        st.integers(thoughts, 10**5)), cached_tokens=draw(st.integers(0, 1)),
        thoughts_tokens=thoughts)
    return stream(*gs, finish=finish, usage=u)


def carried(target: str, want: dict[str, Any]) -> dict[str, Any]:
    if target == "ollama":
        p, r, _, _ = want["usage"]
        want = {**want, "usage": (p, r, None, None)}
    return want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=streams(), data=st.data())
def test_every_encoder_round_trips_what_its_target_carries(events: list, data: Any) -> None:
    from streamflow.core.message import Assembler
    asm = Assembler()
    for ev in events:
        asm.feed(ev)
    want = summary(asm.message)
    for target in TARGETS:
        enc = get_encoder(target)()
        chunks = [enc.feed(ev) for ev in events]
        for chunk in chunks:  # whole frames only: each can be flushed at once
            assert chunk == b"" or chunk.endswith(b"\n")
        body = b"".join(chunks)
        back = read_back(body, target)
        assert back.error is None, (target, back.error)
        assert summary(back.message) == carried(target, want), target
        if target != "ollama":
            assert opaque(back.message) == opaque(asm.message), target
        if target.startswith("uni"):
            assert back.events == events
        # any chunking of the body decodes the same
        cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=4)))
        decoder = StreamDecoder(target)
        for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True):
            decoder.feed(body[a:b])
        decoder.close()
        assert summary(decoder.message) == summary(back.message)
