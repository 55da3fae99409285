"""Oracle: streamflow assembles what the official clients give for the same bytes.

The bytes are served offline through ``httpx.MockTransport``:

* ``openai``: ``client.responses.stream(...)`` and its events / ``get_final_response()``.
* ``google-genai``: ``client.models.generate_content_stream(...)`` (its HTTP client is
  injected with ``HttpOptions(httpx_client=...)``); the SDK does not assemble a
  stream, so the expected message is read from its parsed chunks the way its docs
  do (concatenate parts, read the last usage and finish reason).

Where the official clients fall short (kept as documentation, asserted here so a
change in them is noticed):

* openai ``get_final_response()`` raises a bare ``RuntimeError("Didn't receive a
  response.completed event")`` for ``response.incomplete`` (a normal max-tokens
  end), ``response.failed`` and a flat ``error`` event: the provider's error code
  and message are not raised. streamflow finishes with ``length`` / raises
  ``ProviderError`` with the code.
* openai's helper raises ``RuntimeError`` on delta events without ``output_index``
  (servers that omit it); streamflow resolves them by ``item_id``.
* google-genai raises nothing for a blocked prompt (a chunk with
  ``promptFeedback.blockReason`` and no candidate); streamflow raises
  ``ProviderError(type="prompt_blocked")``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from realdata import framing_for, real_body

from streamflow.core.errors import ProviderError
from streamflow.core.events import InlineDataItem, InlineThinkingItem, TextItem, ThinkingItem
from streamflow.core.message import Message
from streamflow.wire.decoder import assemble

openai = pytest.importorskip("openai")
genai = pytest.importorskip("google.genai")
genai_types = pytest.importorskip("google.genai.types")

DATA = Path(__file__).resolve().parent.parent / "data"


def serve(body: bytes) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    return httpx.Client(transport=httpx.MockTransport(handler))


def as_sse(rel: str, body: bytes) -> bytes:
    """A ``.jsonl`` recording (one payload per line) as the SSE body it was recorded from."""
    if framing_for(rel) != "ndjson":
        return body
    return b"".join(b"data: " + line.strip() + b"\n\n" for line in body.splitlines()
                    if line.strip())


# -- openai Responses ---------------------------------------------------------------
def openai_stream(body: bytes) -> tuple[list[Any], Any]:
    """The client's events, and its final response (``None`` when it refuses to give one)."""
    client = openai.OpenAI(api_key="test", base_url="http://127.0.0.1:9/v1",
                           http_client=serve(body))
    with client.responses.stream(model="m", input="x") as stream:
        events = list(stream)
        try:
            return events, stream.get_final_response()
        except RuntimeError:
            return events, None


def openai_expected(response: Any) -> list[tuple[Any, ...]]:
    """The items streamflow should assemble, read from the client's response output."""
    out: list[tuple[Any, ...]] = []
    for item in response.output:
        if item.type == "reasoning":
            out += [("thinking", s.text) for s in item.summary]
            out += [("thinking", c.text) for c in item.content or []]
            out.append(("inline_thinking", (item.encrypted_content or "").encode(), item.id))
        elif item.type == "message":
            out += [("text", c.text if c.type == "output_text" else c.refusal)
                    for c in item.content]
        elif item.type == "function_call":
            out.append(("tool_call", item.name, item.call_id, json.loads(item.arguments)))
        elif item.type == "custom_tool_call":
            out.append(("tool_call", item.name, item.call_id, {"input": item.input}))
        elif item.type == "image_generation_call":
            out.append(("inline_data", base64.b64decode(item.result)))
    return out


def ours(msg: Message) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in msg.items:
        if isinstance(item, ThinkingItem):
            out.append(("thinking", item.thinking))
        elif isinstance(item, InlineThinkingItem):
            out.append(("inline_thinking", item.data, (item.fidelity or {}).get("id")))
        elif isinstance(item, TextItem):
            out.append(("text", item.text))
        elif isinstance(item, InlineDataItem):
            out.append(("inline_data", item.data))
        else:
            out.append(("tool_call", item.name, item.tool_call_id, item.arguments))
    return out


def assert_same_as_openai(msg: Message, response: Any) -> None:
    assert ours(msg) == openai_expected(response)
    assert (msg.id, msg.model) == (response.id, response.model)
    usage, theirs = msg.usage_metadata, response.usage
    assert usage is not None
    assert usage.prompt_tokens == theirs.input_tokens
    assert usage.cached_tokens == theirs.input_tokens_details.cached_tokens
    assert usage.response_tokens == theirs.output_tokens
    assert usage.thoughts_tokens == theirs.output_tokens_details.reasoning_tokens


def test_openai_real_recording_same_as_the_official_helper() -> None:
    rel = "openai_responses/pyd_responses_stream.sse"
    body = real_body(rel)
    _, response = openai_stream(body)
    msg = assemble(body, "openai-responses")
    assert msg.text == response.output_text == "The capital of France is Paris."
    assert_same_as_openai(msg, response)
    assert msg.finish_reason == "stop"


@pytest.mark.parametrize("name", ["reasoning_parallel_tools.sse",
                                  "custom_tool_server_tools.sse"])
def test_openai_authored_streams_same_as_the_official_helper(name: str) -> None:
    body = (DATA / "openai_responses" / name).read_bytes()
    _, response = openai_stream(body)
    assert_same_as_openai(assemble(body, "openai-responses"), response)


def test_openai_real_error_recording_same_error_as_the_official_client() -> None:
    rel = "openai_responses/vercel_responses_error.jsonl"
    body = real_body(rel)
    with pytest.raises(openai.APIError) as theirs:
        openai_stream(as_sse(rel, body))
    with pytest.raises(ProviderError) as mine:
        assemble(body, "openai-responses", framing=framing_for(rel))
    assert mine.value.message == theirs.value.message
    assert mine.value.code == theirs.value.code == "insufficient_quota"


def test_openai_incomplete_gives_no_final_response_but_streamflow_finishes_with_length() -> None:
    body = (DATA / "openai_responses" / "refusal_incomplete.sse").read_bytes()
    events, response = openai_stream(body)
    assert response is None  # the official helper refuses; its last event has the response
    assert events[-1].type == "response.incomplete"
    msg = assemble(body, "openai-responses")
    assert [i.text for i in msg.items] == [events[-1].response.output[0].content[0].refusal,
                                           events[-1].response.output[0].content[1].text]
    assert msg.finish_reason == "length"


@pytest.mark.parametrize("name", ["failed.sse", "error_event.sse"])
def test_openai_failures_raise_nothing_in_the_helper_but_a_provider_error_here(name: str) -> None:
    body = (DATA / "openai_responses" / name).read_bytes()
    events, response = openai_stream(body)
    assert response is None
    theirs = events[-1]
    code = theirs.response.error.code if theirs.type == "response.failed" else theirs.code
    with pytest.raises(ProviderError) as mine:
        assemble(body, "openai-responses")
    assert mine.value.code == code


def test_openai_helper_rejects_missing_indices_streamflow_does_not() -> None:
    body = (DATA / "openai_responses" / "interleaved_calls.sse").read_bytes()
    with pytest.raises(RuntimeError):
        openai_stream(body)
    assert [c.arguments for c in assemble(body, "openai-responses").tool_calls] == [
        {"q": "a"}, {"q": "b"}]


# -- google-genai ---------------------------------------------------------------------
def gemini_chunks(body: bytes) -> list[Any]:
    client = genai.Client(api_key="test", http_options=genai_types.HttpOptions(
        httpx_client=serve(body)))
    return list(client.models.generate_content_stream(model="m", contents="x"))


def joined_audio(blobs: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Consecutive audio chunks of one type are one item in UniEvent (one per image)."""
    out: list[tuple[str, bytes]] = []
    for mime, data in blobs:
        if out and mime.startswith("audio/") and out[-1][0] == mime:
            out[-1] = (mime, out[-1][1] + data)
        else:
            out.append((mime, data))
    return out


def gemini_expected(chunks: list[Any], candidate: int = 0) -> dict[str, Any]:
    """What a google-genai user reads from the chunks of one candidate."""
    parts = [p for c in chunks for cand in c.candidates or [] if (cand.index or 0) == candidate
             and cand.content for p in cand.content.parts or []]
    usage = [c.usage_metadata for c in chunks if c.usage_metadata][-1]
    finish = [cand.finish_reason for c in chunks for cand in c.candidates or []
              if cand.finish_reason and (cand.index or 0) == candidate][-1]
    return {
        "text": "".join(p.text for p in parts if p.text and not p.thought),
        "thinking": "".join(p.text for p in parts if p.text and p.thought),
        "signatures": [p.thought_signature for p in parts if p.thought_signature],
        "calls": [(p.function_call.name, p.function_call.args) for p in parts
                  if p.function_call],
        "data": joined_audio([(p.inline_data.mime_type, p.inline_data.data) for p in parts
                              if p.inline_data]),
        "usage": (usage.prompt_token_count, usage.cached_content_token_count,
                  usage.thoughts_token_count, usage.candidates_token_count),
        "finish": finish.value,
        "id": chunks[0].response_id, "model": chunks[0].model_version,
    }


def gemini_ours(msg: Message, candidate: int = 0) -> dict[str, Any]:
    items = [i for i in msg.items if (i.provider or {}).get("candidate_index", 0) == candidate]
    u = msg.usage_metadata
    assert u is not None
    thoughts = u.thoughts_tokens
    return {
        "text": "".join(i.text for i in items if isinstance(i, TextItem)),
        "thinking": "".join(i.thinking for i in items if isinstance(i, ThinkingItem)),
        "signatures": [base64.b64decode(i.fidelity["thought_signature"]) for i in items
                       if i.fidelity],
        "calls": [(i.name, i.arguments) for i in msg.tool_calls if i in items],
        "data": [(i.mime_type, i.data) for i in items if isinstance(i, InlineDataItem)],
        "usage": (u.prompt_tokens, u.cached_tokens, thoughts,
                  None if u.response_tokens is None else u.response_tokens - (thoughts or 0)),
        "finish": msg.provider["finish_reason"] if candidate == 0 else
        msg.provider["candidates"][candidate - 1]["finish_reason"],
        "id": msg.id, "model": msg.model,
    }


@pytest.mark.parametrize("rel", ["gemini/pyd_google_model_stream.sse",
                                 "gemini/vercel_google_reasoning.jsonl"])
def test_gemini_real_recordings_same_as_google_genai(rel: str) -> None:
    body = real_body(rel)
    expected = gemini_expected(gemini_chunks(as_sse(rel, body)))
    assert gemini_ours(assemble(body, "gemini", framing=framing_for(rel))) == expected


@pytest.mark.parametrize("name", ["thinking_parallel_calls.sse", "max_tokens_usage_after.sse",
                                  "safety.sse", "parts_mix.sse"])
def test_gemini_authored_streams_same_as_google_genai(name: str) -> None:
    body = (DATA / "gemini" / name).read_bytes()
    assert gemini_ours(assemble(body, "gemini")) == gemini_expected(gemini_chunks(body))


def test_gemini_second_candidate_same_as_google_genai() -> None:
    body = (DATA / "gemini" / "two_candidates.sse").read_bytes()
    chunks, msg = gemini_chunks(body), assemble(body, "gemini")
    for n in (0, 1):
        assert gemini_ours(msg, n)["text"] == gemini_expected(chunks, n)["text"]


def test_gemini_in_band_error_same_status_as_google_genai() -> None:
    body = (DATA / "gemini" / "error_mid_stream.sse").read_bytes()
    with pytest.raises(genai.errors.APIError) as theirs:
        gemini_chunks(body)
    with pytest.raises(ProviderError) as mine:
        assemble(body, "gemini")
    assert (mine.value.code, mine.value.type) == (theirs.value.code, theirs.value.status)


def test_gemini_blocked_prompt_is_silent_in_google_genai_an_error_here() -> None:
    body = (DATA / "gemini" / "prompt_blocked.sse").read_bytes()
    (chunk,) = gemini_chunks(body)
    assert not chunk.candidates and chunk.prompt_feedback.block_reason.value == \
        "PROHIBITED_CONTENT"
    with pytest.raises(ProviderError) as mine:
        assemble(body, "gemini")
    assert mine.value.code == "PROHIBITED_CONTENT"


def test_gemini_streamed_call_header_same_as_google_genai() -> None:
    body = (DATA / "gemini" / "streamed_args.sse").read_bytes()
    first = gemini_chunks(body)[0].candidates[0].content.parts[0]
    (call,) = assemble(body, "gemini").tool_calls
    assert (call.name, call.tool_call_id) == (first.function_call.name, first.function_call.id)
    assert base64.b64decode(call.fidelity["thought_signature"]) == first.thought_signature
