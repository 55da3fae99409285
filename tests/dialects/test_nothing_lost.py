"""Nothing lost (issue 10, item 12): fields hostile or unusual servers send reach the user."""

from __future__ import annotations

import json
from typing import Any

import pytest
from realdata import fault_bodies

from streamflow import assemble
from streamflow.core.errors import IncompleteStreamError

BODIES = fault_bodies()


def sse(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(obj, ensure_ascii=False) + "\n\n").encode()


def test_gemini_vertex_citations_are_kept_and_their_urls_flagged() -> None:
    cites = [{"startIndex": 0, "endIndex": 5, "uri": "https://example.org/a"},
             {"startIndex": 5, "endIndex": 9, "uri": "javascript:alert(1)"}]
    body = (sse({"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}}]})
            + sse({"candidates": [{"content": {"parts": [{"text": " you"}], "role": "model"},
                                   "citationMetadata": {"citations": cites},
                                   "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2}}))
    message = assemble(body, "gemini")
    text = message.items[0]
    assert text.provider is not None and text.provider["citations"] == cites
    flags = text.provider["url_flags"]
    assert [f["reason"] for f in flags] == ["scheme"] and "uri" in flags[0]["path"]


def test_responses_completed_fields_without_a_slot_are_kept() -> None:
    body = BODIES.body_for("openai-responses")
    last = body.rindex(b"event: response.completed")
    event = json.loads(body[last:].split(b"data: ", 1)[1])
    event["timings"] = {"prompt_ms": 12.5, "predicted_per_second": 40.1}
    body = body[:last] + sse(event, "response.completed")
    message = assemble(body, "openai-responses")
    assert message.provider["timings"] == {"prompt_ms": 12.5, "predicted_per_second": 40.1}


def test_openai_chat_per_chunk_extras_stay_on_the_event_they_came_with() -> None:
    from streamflow import StreamDecoder

    def chunk(i: int, **delta: Any) -> bytes:
        return sse({"id": "c", "object": "chat.completion.chunk", "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                    "timings": {"predicted_n": i, "predicted_per_token_ms": 10 + i}})
    body = chunk(1, content="a") + chunk(2, content="b") + chunk(3, content="c")
    body += sse({"id": "c", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body += b"data: [DONE]\n\n"
    dec = StreamDecoder("openai-chat")
    events = dec.feed(body) + dec.close()
    seen = [e.provider["timings"]["predicted_n"] for e in events
            if e.provider and "timings" in e.provider and e.event_type == "delta"
            and e.content_items[0].type == "text.delta"]
    assert seen == [1, 2, 3]


def test_bedrock_cut_inside_the_final_metadata_frame_is_incomplete() -> None:
    body = BODIES.body_for("bedrock")
    cut = body[:-10]  # inside the metadata frame that carries the usage
    with pytest.raises(IncompleteStreamError) as info:
        assemble(cut, "bedrock")
    assert info.value.partial is not None and info.value.partial.text == BODIES.EXPECTED_TEXT
    assert assemble(body, "bedrock").usage_metadata.response_tokens == 42  # type: ignore
