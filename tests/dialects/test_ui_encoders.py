"""The web UI encoders (``vercel-ui``, ``ag-ui``), sans-IO: runs, steps, groups, errors.

A small Python fold of each protocol (deltas joined per id, the way the AI SDK's
``readUIMessageStream`` and AG-UI's message assembly do) must give back the message
the Assembler built, for any stream hypothesis can make; the real clients check the
same on every recording in tests/web/test_node_clients.py.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamflow
from streamflow.app.tools import ToolResult
from streamflow.core.errors import ProviderError, ToolCallArgumentParseError
from streamflow.core.events import (
    EmbeddingItem,
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
)
from streamflow.core.message import Assembler
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import get_encoder
from streamflow.wire.targets.ag_ui.encode import AGUIEncoder
from streamflow.wire.targets.vercel_ui.encode import VercelUIEncoder

FIXED = {"thread_id": "t", "run_id": "r", "message_id": "m"}


def delta(item: Any, provider: dict[str, Any] | None = None) -> UniEvent:
    return UniEvent("delta", [item], provider=provider)


def stop(finish: str = "stop", prompt: int = 10, output: int = 5) -> UniEvent:
    return UniEvent("stop", [], Usage(0, prompt, None, output), finish)  # type: ignore[arg-type]


def text_group(*parts: str) -> list[UniEvent]:
    return [delta(TextItem(text=p)) for p in parts] + [delta(TextItem("text.done", "".join(parts)))]


def call_group(call_id: str, name: str, args: dict[str, Any], cut: int = 3) -> list[UniEvent]:
    raw = json.dumps(args)
    return [delta(ToolCallItem(name=name, tool_call_id=call_id, arguments=raw[:cut])),
            delta(ToolCallItem(arguments=raw[cut:])),
            delta(ToolCallItem("tool_call.done", name, call_id, args))]


def payloads(body: bytes) -> list[Any]:
    out = []
    for event in body.decode().split("\n\n"):
        if event:
            data = event.removeprefix("data: ")
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def fold_vercel(body: bytes) -> list[tuple[Any, ...]]:
    """(kind, value) parts the way readUIMessageStream builds them."""
    parts: list[list[Any]] = []
    by_id: dict[str, list[Any]] = {}
    for chunk in payloads(body):
        kind = chunk["type"] if isinstance(chunk, dict) else chunk
        if kind in ("text-start", "reasoning-start"):
            by_id[chunk["id"]] = [kind.split("-")[0], ""]
            parts.append(by_id[chunk["id"]])
        elif kind in ("text-delta", "reasoning-delta"):
            by_id[chunk["id"]][1] += chunk["delta"]
        elif kind == "tool-input-start":
            by_id[chunk["toolCallId"]] = ["tool", chunk["toolName"], ""]
            parts.append(by_id[chunk["toolCallId"]])
        elif kind == "tool-input-delta":
            by_id[chunk["toolCallId"]][2] += chunk["inputTextDelta"]
        elif kind == "tool-input-available":
            by_id[chunk["toolCallId"]][2] = chunk["input"]
    return [tuple(p) for p in parts]


def fold_agui(body: bytes) -> list[tuple[Any, ...]]:
    """(kind, value) messages the way AG-UI clients assemble them."""
    parts: list[list[Any]] = []
    by_id: dict[str, list[Any]] = {}
    for event in payloads(body):
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            by_id[event["messageId"]] = ["text", ""]
            parts.append(by_id[event["messageId"]])
        elif kind == "REASONING_MESSAGE_START":
            by_id[event["messageId"]] = ["reasoning", ""]
            parts.append(by_id[event["messageId"]])
        elif kind in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
            by_id[event["messageId"]][1] += event["delta"]
        elif kind == "TOOL_CALL_START":
            by_id[event["toolCallId"]] = ["tool", event["toolCallName"], ""]
            parts.append(by_id[event["toolCallId"]])
        elif kind == "TOOL_CALL_ARGS":
            by_id[event["toolCallId"]][2] += event["delta"]
        elif kind == "TOOL_CALL_END":
            part = by_id[event["toolCallId"]]
            part[2] = json.loads(part[2])
    return [tuple(p) for p in parts]


def message_parts(events: list[UniEvent]) -> list[tuple[Any, ...]]:
    asm = Assembler()
    for event in events:
        asm.feed(event)
    out: list[tuple[Any, ...]] = []
    for item in asm.message.items:
        if isinstance(item, TextItem):
            out.append(("text", item.text))
        elif isinstance(item, ThinkingItem):
            out.append(("reasoning", item.thinking))
        elif isinstance(item, ToolCallItem):
            out.append(("tool", item.name, item.arguments))
    return out


fragments = st.lists(st.text(min_size=0, max_size=8), min_size=1, max_size=5)


@st.composite
def streams(draw: st.DrawFn) -> list[UniEvent]:
    events: list[UniEvent] = []
    for index in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "thinking", "tool_call"]))
        parts = draw(fragments)
        if kind == "text":
            events += text_group(*parts)
        elif kind == "thinking":
            events += [delta(ThinkingItem(thinking=p)) for p in parts]
            events.append(delta(ThinkingItem("thinking.done", "".join(parts),
                                             fidelity={"signature": f"sig{index}"})))
        else:
            args = {"q": "".join(parts), "n": index}
            events += call_group(f"call_{index}", "lookup", args, cut=draw(st.integers(0, 9)))
    return [*events, stop()]


@settings(max_examples=60, deadline=None)
@given(streams())
def test_the_folded_ui_message_is_the_assembled_message(events: list[UniEvent]) -> None:
    want = message_parts(events)
    vercel = b"".join(streamflow.encode(events, "vercel-ui"))
    agui = b"".join(streamflow.encode(events, "ag-ui", **FIXED))
    assert fold_vercel(vercel) == want
    assert fold_agui(agui) == want
    assert payloads(vercel)[-1] == "[DONE]"
    assert payloads(agui)[-1]["type"] == "RUN_FINISHED"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=30))
def test_any_chunking_of_the_body_writes_the_same_bytes(cuts: list[int]) -> None:
    from realdata import DATA

    body = (DATA / "cli" / "anthropic_tool_turn.sse").read_bytes()
    whole = b"".join(streamflow.encode(StreamDecoder().feed(body), "ag-ui", **FIXED))
    decoder, events, at = StreamDecoder(), [], 0
    for size in cuts * (len(body) // sum(cuts) + 1):
        events += decoder.feed(body[at:at + size])
        at += size
    events += decoder.close()
    assert b"".join(streamflow.encode(events, "ag-ui", **FIXED)) == whole


def agent_run(encoder: Any) -> list[Any]:
    """Two turns of a run: a call, its result, the answer."""
    body = b"".join(encoder.feed(e) for e in [
        delta(TextItem(text="Let me look."), {"id": "msg_1", "model": "m1"}),
        delta(TextItem("text.done", "Let me look.")),
        *call_group("call_1", "lookup", {"q": "x"}), stop("tool_call", 10, 4)])
    body += encoder.tool_results([ToolResult("call_1", "lookup", {"found": True}),
                                  ToolResult("call_2", "other", {"error": "Timeout"}, True)])
    body += b"".join(encoder.feed(e) for e in [*text_group("Found ", "it."), stop("stop", 20, 3)])
    return payloads(body + encoder.finish())


def test_a_vercel_agent_run_is_one_message_with_a_step_per_turn() -> None:
    chunks = agent_run(VercelUIEncoder(run=True, message_id="m"))
    types = [c if c == "[DONE]" else c["type"] for c in chunks]
    assert types == [
        "start", "start-step", "text-start", "text-delta", "text-end", "tool-input-start",
        "tool-input-delta", "tool-input-delta", "tool-input-available", "finish-step",
        "message-metadata", "tool-output-available", "tool-output-error", "start-step",
        "text-start", "text-delta", "text-delta", "text-end", "finish-step", "message-metadata",
        "finish", "[DONE]"]
    assert chunks[0] == {"type": "start", "messageId": "m"}
    assert chunks[11] == {"type": "tool-output-available", "toolCallId": "call_1",
                          "output": {"found": True}}
    assert chunks[12]["errorText"] == '{"error":"Timeout"}'
    meta = chunks[-2]["messageMetadata"]
    assert meta["usage_metadata"]["prompt_tokens"] == 30
    assert meta["usage_metadata"]["response_tokens"] == 7
    assert [t["finish_reason"] for t in meta["turns"]] == ["tool_call", "stop"]
    assert meta["turns"][0]["model"] == "m1" and meta["finish_reason"] == "stop"


def test_an_ag_ui_agent_run_is_one_run_with_a_step_per_turn() -> None:
    events = agent_run(AGUIEncoder(run=True, **FIXED))
    types = [e["type"] for e in events]
    assert types[:2] == ["RUN_STARTED", "STEP_STARTED"]
    first_end = types.index("STEP_FINISHED")
    assert types[first_end + 1:first_end + 4] == ["TOOL_CALL_RESULT", "TOOL_CALL_RESULT",
                                                  "STEP_STARTED"]
    assert [e["stepName"] for e in events if e["type"].startswith("STEP_")] == [
        "turn 1", "turn 1", "turn 2", "turn 2"]
    result = events[first_end + 1]
    assert result["toolCallId"] == "call_1" and result["content"] == '{"found":true}'
    assert result["role"] == "tool"
    assert events[first_end + 2]["metadata"]["streamflow"]["is_error"] is True
    start = events[types.index("TOOL_CALL_START")]
    assert start["parentMessageId"] == events[types.index("TEXT_MESSAGE_START")]["messageId"]
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED" and finished["threadId"] == "t"
    assert finished["usage"] == [
        {"model": "m1", "inputTokens": 10, "outputTokens": 4, "totalTokens": 14,
         "cachedInputTokens": 0},
        {"inputTokens": 20, "outputTokens": 3, "totalTokens": 23, "cachedInputTokens": 0}]


def test_thinking_signature_is_provider_metadata_and_an_encrypted_value() -> None:
    events = [delta(ThinkingItem(thinking="hmm")),
              delta(ThinkingItem("thinking.done", "hmm", fidelity={"signature": "s1"})), stop()]
    vercel = payloads(b"".join(streamflow.encode(events, "vercel-ui")))
    end = next(c for c in vercel if isinstance(c, dict) and c["type"] == "reasoning-end")
    assert end["providerMetadata"] == {"streamflow": {"fidelity": {"signature": "s1"}}}
    agui = payloads(b"".join(streamflow.encode(events, "ag-ui", **FIXED)))
    value = next(e for e in agui if e["type"] == "REASONING_ENCRYPTED_VALUE")
    assert value["encryptedValue"] == "s1" and value["subtype"] == "message"
    assert [e["type"] for e in agui][-3:] == ["REASONING_END", "STEP_FINISHED", "RUN_FINISHED"]


def test_binary_redacted_and_vector_items_are_written_whole() -> None:
    png, secret = b"\x89PNG....", b"\x00opaque"
    events = [delta(InlineDataItem(data=png[:4], mime_type="image/png")),
              delta(InlineDataItem(data=png[4:])),
              delta(InlineDataItem("inline_data.done", png, "image/png")),
              delta(InlineThinkingItem(data=secret)),
              delta(InlineThinkingItem("inline_thinking.done", secret)),
              delta(EmbeddingItem(embedding=[0.5])),
              delta(EmbeddingItem("embedding.done", [0.5])), stop()]
    chunks = [c for c in payloads(b"".join(streamflow.encode(events, "vercel-ui")))
              if isinstance(c, dict) and c["type"] not in ("start", "start-step", "finish-step",
                                                          "finish")]
    assert chunks[0] == {"type": "file", "mediaType": "image/png",
                         "url": "data:image/png;base64," + base64.b64encode(png).decode()}
    assert [c["type"] for c in chunks[1:3]] == ["reasoning-start", "reasoning-end"]
    assert chunks[2]["providerMetadata"]["streamflow"]["data"] == base64.b64encode(secret).decode()
    assert chunks[3] == {"type": "data-embedding", "id": "embedding-3", "data": [0.5]}
    agui = payloads(b"".join(streamflow.encode(events, "ag-ui", **FIXED)))
    custom = [e for e in agui if e["type"] == "CUSTOM"]
    assert [e["name"] for e in custom] == ["streamflow.inline_data", "streamflow.embedding"]
    assert custom[0]["value"]["mimeType"] == "image/png"


def test_bad_tool_arguments_close_the_call_as_failed_then_the_error() -> None:
    open_call = [delta(ToolCallItem(name="f", tool_call_id="c1", arguments='{"a": '))]
    error = ToolCallArgumentParseError("bad", tool_call_id="c1", name="f", arguments='{"a": ')
    for name in ("vercel-ui", "ag-ui"):
        encoder = get_encoder(name)()
        body = b"".join(encoder.feed(e) for e in open_call) + encoder.fail(error)
        out = payloads(body)
        if name == "vercel-ui":
            assert out[-3] == {"type": "tool-input-error", "toolCallId": "c1", "toolName": "f",
                               "input": '{"a": ', "errorText": "ToolCallArgumentParseError: bad"}
            assert out[-2] == {"type": "error", "errorText": "ToolCallArgumentParseError: bad"}
            assert out[-1] == "[DONE]"
        else:
            assert [e["type"] for e in out][-2:] == ["TOOL_CALL_END", "RUN_ERROR"]
            assert out[-1]["code"] == "ToolCallArgumentParseError"


def test_an_error_keeps_the_partial_text_closed_and_ends_the_stream() -> None:
    events = [delta(TextItem(text="Half an ans"))]
    with pytest.raises(ProviderError):
        list(streamflow.encode(_failing(events), "vercel-ui"))
    body = b"".join(_collect(events, "vercel-ui"))
    assert fold_vercel(body) == [("text", "Half an ans")]
    assert [c if c == "[DONE]" else c["type"] for c in payloads(body)][-3:] == [
        "text-end", "error", "[DONE]"]


def _failing(events: list[UniEvent]) -> Any:
    yield from events
    raise ProviderError("overloaded", type="overloaded_error")


def _collect(events: list[UniEvent], target: str) -> list[bytes]:
    out: list[bytes] = []
    try:
        for chunk in streamflow.encode(_failing(events), target):
            out.append(chunk)
    except ProviderError:
        pass
    return out


def test_a_finished_run_takes_nothing_more() -> None:
    for name in ("vercel-ui", "ag-ui"):
        encoder = get_encoder(name)()
        encoder.feed(stop())
        with pytest.raises(RuntimeError):
            encoder.feed(stop())
        with pytest.raises(RuntimeError):
            encoder.finish()
        run = get_encoder(name)(run=True)
        run.feed(stop())
        assert not run.finished  # a run stays open between turns
        run.finish()
        with pytest.raises(RuntimeError):
            run.tool_results([])
