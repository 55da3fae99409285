"""Small, hand-written stream bodies for the fault tests, one per dialect.

Each has text with multi-byte UTF-8 (so a cut can land mid-character) and, where the
dialect has them, a tool call whose JSON arguments a cut can split. ``BODIES`` maps
dialect -> body; ``EXPECTED_TEXT`` the answer text every intact body assembles to.
"""

from __future__ import annotations

import json
from typing import Any

from streamflow.wire.dialects import dialect_names, get_dialect
from streamflow.wire.framing.eventstream import encode_message

TEXT_PARTS = ["Grüße", " aus ", "Köln — ", "你好", "!"]
EXPECTED_TEXT = "".join(TEXT_PARTS)
ARG_PARTS = ['{"city": ', '"Zürich", ', '"days": 3}']
ARGS = {"city": "Zürich", "days": 3}


def sse(obj: Any, event: str | None = None) -> bytes:
    """One SSE event (``event:`` line optional)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


def anthropic() -> bytes:
    """Thinking, text, a tool call; ``message_stop`` last."""
    out = [sse({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}, "message_start"),
        sse({"type": "ping"}, "ping"),
        sse({"type": "content_block_start", "index": 0,
             "content_block": {"type": "thinking", "thinking": ""}}, "content_block_start"),
        sse({"type": "content_block_delta", "index": 0,
             "delta": {"type": "thinking_delta", "thinking": "Hmm…"}}, "content_block_delta"),
        sse({"type": "content_block_delta", "index": 0,
             "delta": {"type": "signature_delta", "signature": "sig=="}}, "content_block_delta"),
        sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        sse({"type": "content_block_start", "index": 1,
             "content_block": {"type": "text", "text": ""}}, "content_block_start")]
    out += [sse({"type": "content_block_delta", "index": 1,
                 "delta": {"type": "text_delta", "text": t}}, "content_block_delta")
            for t in TEXT_PARTS]
    out += [sse({"type": "content_block_stop", "index": 1}, "content_block_stop"),
            sse({"type": "content_block_start", "index": 2, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}},
                "content_block_start")]
    out += [sse({"type": "content_block_delta", "index": 2,
                 "delta": {"type": "input_json_delta", "partial_json": p}}, "content_block_delta")
            for p in ARG_PARTS]
    out += [sse({"type": "content_block_stop", "index": 2}, "content_block_stop"),
            sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                 "usage": {"output_tokens": 42}}, "message_delta"),
            sse({"type": "message_stop"}, "message_stop")]
    return b"".join(out)


def openai_chat() -> bytes:
    """Text, then a tool call, a finish chunk, a usage chunk and ``[DONE]``."""
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return sse({"id": "gen-1", "object": "chat.completion.chunk", "created": 1,
                    "model": "gpt-x", "choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": finish}], **extra})
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": t}) for t in TEXT_PARTS]
    out.append(chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                      "function": {"name": "weather", "arguments": ""}}]}))
    out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
            for p in ARG_PARTS]
    out.append(chunk({}, "tool_calls"))
    out.append(sse({"id": "gen-1", "object": "chat.completion.chunk", "created": 1,
                    "model": "gpt-x", "choices": [],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 42, "total_tokens": 52}}))
    return b"".join(out) + b"data: [DONE]\n\n"


def openai_responses() -> bytes:
    """One message item with text; ``response.completed`` last."""
    resp = {"id": "resp_1", "object": "response", "model": "gpt-x", "status": "in_progress",
            "output": []}
    seq = iter(range(1000))
    def ev(kind: str, **fields: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(seq), **fields}, kind)
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress",
            "content": []}
    out = [ev("response.created", response=resp),
           ev("response.output_item.added", output_index=0, item=item),
           ev("response.content_part.added", item_id="msg_1", output_index=0, content_index=0,
              part={"type": "output_text", "text": "", "annotations": []})]
    out += [ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0,
               delta=t) for t in TEXT_PARTS]
    part = {"type": "output_text", "text": EXPECTED_TEXT, "annotations": []}
    done_item = dict(item, status="completed", content=[part])
    out += [ev("response.output_text.done", item_id="msg_1", output_index=0, content_index=0,
               text=EXPECTED_TEXT),
            ev("response.content_part.done", item_id="msg_1", output_index=0, content_index=0,
               part=part),
            ev("response.output_item.done", output_index=0, item=done_item),
            ev("response.completed", response=dict(
                resp, status="completed", output=[done_item],
                usage={"input_tokens": 10, "output_tokens": 42, "total_tokens": 52}))]
    return b"".join(out)


def gemini() -> bytes:
    """Text chunks; the last carries ``finishReason`` and usage."""
    out = []
    for i, t in enumerate(TEXT_PARTS):
        cand: dict[str, Any] = {"content": {"parts": [{"text": t}], "role": "model"}}
        last = i == len(TEXT_PARTS) - 1
        if last:
            cand["finishReason"] = "STOP"
        out.append(sse({"candidates": [cand], "modelVersion": "gemini-x", "responseId": "r1",
                        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 42,
                                          "totalTokenCount": 52} if last else
                        {"promptTokenCount": 10}}))
    return b"".join(out)


def ollama() -> bytes:
    """NDJSON lines; ``done: true`` last."""
    lines = [{"model": "llama", "created_at": "2024-01-01T00:00:00Z",
              "message": {"role": "assistant", "content": t}, "done": False} for t in TEXT_PARTS]
    lines.append({"model": "llama", "created_at": "2024-01-01T00:00:01Z",
                  "message": {"role": "assistant", "content": ""}, "done": True,
                  "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 42})
    return b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)


def _aws(event: str, payload: dict[str, Any]) -> bytes:
    return encode_message({":event-type": event, ":content-type": "application/json",
                           ":message-type": "event"},
                          json.dumps(payload, ensure_ascii=False).encode())


def bedrock() -> bytes:
    """ConverseStream: text deltas, ``messageStop``, ``metadata``."""
    out = [_aws("messageStart", {"role": "assistant", "p": "abc"})]
    out += [_aws("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}, "p": "x"})
            for t in TEXT_PARTS]
    out += [_aws("contentBlockStop", {"contentBlockIndex": 0, "p": "x"}),
            _aws("messageStop", {"stopReason": "end_turn", "p": "x"}),
            _aws("metadata", {"usage": {"inputTokens": 10, "outputTokens": 42,
                                        "totalTokens": 52}, "metrics": {"latencyMs": 5}})]
    return b"".join(out)


def uni(jsonl: bool = False) -> bytes:
    """The anthropic body's UniEvents, re-encoded as the ``uni`` dialect."""
    from streamflow import StreamDecoder
    from streamflow.wire.dialects.uni.decode import encode_jsonl, encode_sse

    decoder = StreamDecoder("anthropic", clock=lambda: 1)
    events = decoder.feed(anthropic()) + decoder.close()
    encode = encode_jsonl if jsonl else encode_sse
    return b"".join(encode(e) for e in events)


MAKERS = {
    "anthropic": anthropic,
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "gemini": gemini,
    "ollama": ollama,
    "bedrock": bedrock,
    "uni": uni,
    "uni-jsonl": lambda: uni(jsonl=True),
}


def available() -> list[str]:
    """The dialects above that are registered and import."""
    out = []
    for name in MAKERS:
        if name not in dialect_names():
            continue
        try:
            get_dialect(name)
        except ImportError:
            continue
        out.append(name)
    return out


def body_for(dialect: str) -> bytes:
    """The body of ``dialect``."""
    return MAKERS[dialect]()
