"""Regression tests for the holes hostile input found in openai-chat (issue 10, items 8, 9)."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest

from streamflow import StreamDecoder
from streamflow.core.errors import LimitExceededError
from streamflow.core.limits import Limits
from streamflow.wire.dialects.openai_chat import _calls as calls_module


def chunk(tool_calls: list[dict[str, Any]] | None = None, finish: str | None = None) -> bytes:
    delta: dict[str, Any] = {"tool_calls": tool_calls} if tool_calls else {}
    obj = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def call(index: int, args: str, first: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if first:
        out.update(id=f"call_{index}", type="function")
        out["function"]["name"] = "f"
    return out


def test_buffered_out_of_order_calls_count_against_the_message_limit() -> None:
    """Call 0 stays open while later indices pour in: the buffer is bounded by the limits."""
    limit = 256 * 1024
    limits = Limits(max_message_bytes=limit, max_groups=10_000)
    dec = StreamDecoder("openai-chat", limits=limits)
    piece = "x" * 4096
    tracemalloc.start()
    with pytest.raises(LimitExceededError) as info:
        dec.feed(chunk([call(0, '{"a": "', first=True)]))
        for i in range(1, 2000):  # 8 MB of arguments for calls that cannot go live yet
            dec.feed(chunk([call(i, '{"b": "' + piece, first=True)]))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.value.limit == "max_message_bytes"
    assert peak < 4 * limit + 512 * 1024, peak


def test_buffered_calls_count_against_max_groups() -> None:
    dec = StreamDecoder("openai-chat", limits=Limits(max_groups=10))
    with pytest.raises(LimitExceededError) as info:
        dec.feed(chunk([call(0, '{"a": "', first=True)]))
        for i in range(1, 50):
            dec.feed(chunk([call(i, "{}", first=True)]))
    assert info.value.limit == "max_groups"


def test_index_arrivals_scan_each_argument_byte_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 new indices while call 0 is open: the completeness check stays linear."""
    scanned = 0
    feed = calls_module.ObjectEnd.feed

    def counting(self: Any, text: str) -> None:
        nonlocal scanned
        scanned += len(text)
        feed(self, text)

    monkeypatch.setattr(calls_module.ObjectEnd, "feed", counting)
    body = [chunk([call(0, '{"a": "', first=True)])]
    total = len('{"a": "')
    for i in range(1, 2001):
        body.append(chunk([call(0, "y" * 500)]))
        body.append(chunk([call(i, "{}", first=True)]))
        total += 500 + 2
    body.append(chunk([call(0, '"}')]))
    body.append(chunk(finish="tool_calls"))
    body.append(b"data: [DONE]\n\n")
    dec = StreamDecoder("openai-chat")
    for b in body:
        dec.feed(b)
    dec.close()
    message = dec.message
    assert len(message.tool_calls) == 2001
    assert message.tool_calls[0].arguments == {"a": "y" * 500 * 2000}
    assert scanned <= total + 2


def test_a_tool_call_cut_by_max_tokens_names_the_cause_and_keeps_finish_and_usage() -> None:
    """Item 13: finish_reason length + usage + [DONE] while the last call's arguments are cut."""
    usage = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [],
             "usage": {"prompt_tokens": 5, "completion_tokens": 16}}
    body = (chunk([call(0, '{"city": "Zü', first=True)]) + chunk(finish="length")
            + b"data: " + json.dumps(usage).encode() + b"\n\n" + b"data: [DONE]\n\n")
    from streamflow.core.errors import ToolCallArgumentParseError
    with pytest.raises(ToolCallArgumentParseError) as info:
        dec = StreamDecoder("openai-chat")
        dec.feed(body)
        dec.close()
    err = info.value
    assert "cut short: the provider stopped with finish_reason length" in str(err)
    assert err.partial is not None and not err.partial.complete
    assert err.partial.finish_reason == "length"
    assert err.partial.usage_metadata is not None
    assert err.partial.usage_metadata.response_tokens == 16


def _jsonl(sse_body: bytes) -> bytes:
    lines = [line[6:] for line in sse_body.split(b"\n") if line.startswith(b"data: {")]
    return b"\n".join(lines) + b"\n"


def test_a_json_lines_recording_is_complete_after_its_finish_chunk() -> None:
    """Item 14: one payload per line, where [DONE] cannot appear."""
    body = (chunk([call(0, '{"q": 1}', first=True)]) + chunk(finish="tool_calls")
            + b"data: [DONE]\n\n")
    from streamflow import assemble
    from streamflow.core.errors import IncompleteStreamError
    for dialect in ("openai-chat", "auto"):
        message = assemble(_jsonl(body), dialect, framing="ndjson")
        assert message.complete and message.finish_reason == "tool_call"
        assert message.tool_calls[0].arguments == {"q": 1}
    with pytest.raises(IncompleteStreamError):  # a raw SSE body still needs [DONE]
        assemble(body.replace(b"data: [DONE]\n\n", b""), "openai-chat")
    with pytest.raises(IncompleteStreamError):  # and a recording cut before the finish chunk
        assemble(_jsonl(chunk([call(0, '{"q": 1}', first=True)])), "openai-chat",
                 framing="ndjson")


def test_the_real_deepseek_json_lines_recording_inspects_complete() -> None:
    from realdata import real_body

    from streamflow import assemble
    message = assemble(real_body("deepseek/vercel_deepseek_tool_call.jsonl"), framing="ndjson")
    assert message.complete and message.finish_reason == "tool_call"
    assert message.usage_metadata is not None and message.usage_metadata.prompt_tokens == 339
