"""The official SDKs reading our bytes, offline: each returns the summary a user reads.

The body is served through ``httpx.MockTransport`` (the anthropic SDK's own httpx
fork when it ships one), exactly as the oracle tests in tests/dialects/ do it:
``anthropic`` ``messages.stream(...).get_final_message()``, ``openai``
``chat.completions.stream(...).get_final_completion()`` and
``responses.stream(...).get_final_response()``, ``google-genai``
``models.generate_content_stream``. Each summary has the keys of
:func:`corpus.summary` plus ``opaque`` (signatures, redacted/encrypted reasoning).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
genai = pytest.importorskip("google.genai")
genai_types = pytest.importorskip("google.genai.types")

try:  # recent anthropic SDKs ship their own fork of httpx
    import httpx2 as anthropic_httpx  # type: ignore[import-not-found]
except ImportError:
    anthropic_httpx = httpx

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
           "tool_use": "tool_call", "stop": "stop", "length": "length",
           "tool_calls": "tool_call", "STOP": "stop", "MAX_TOKENS": "length"}


def _serve(lib: Any, body: bytes) -> Any:
    def handler(request: Any) -> Any:
        return lib.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    return lib.Client(transport=lib.MockTransport(handler))


def anthropic_reads(body: bytes) -> dict[str, Any]:
    client = anthropic.Anthropic(api_key="x", http_client=_serve(anthropic_httpx, body))
    with client.messages.stream(model="m", max_tokens=64,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        msg = stream.get_final_message()
    blocks = msg.content
    u = msg.usage
    prompt = u.input_tokens + (u.cache_read_input_tokens or 0) + \
        (u.cache_creation_input_tokens or 0)
    return {
        "text": "".join(b.text for b in blocks if b.type == "text"),
        "thinking": "".join(b.thinking for b in blocks if b.type == "thinking"),
        "calls": [(b.name, b.id, b.input) for b in blocks if b.type == "tool_use"],
        "usage": (prompt, u.output_tokens),
        "finish": _FINISH.get(msg.stop_reason or "", "unknown"),
        "opaque": {b.signature for b in blocks if b.type == "thinking" and b.signature}
        | {b.data for b in blocks if b.type == "redacted_thinking"},
    }


def _openai(body: bytes) -> Any:
    return openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1",
                         http_client=_serve(httpx, body))


def chat_reads(body: bytes) -> dict[str, Any]:
    client = _openai(body)
    try:
        with client.chat.completions.stream(model="m", messages=[
                {"role": "user", "content": "hi"}]) as stream:
            completion = stream.get_final_completion()
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as exc:
        completion = exc.completion  # type: ignore[union-attr]
    choice = completion.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    u = completion.usage
    details = extra.get("reasoning_details") or []
    return {
        "text": (message.content or "") + (message.refusal or ""),
        "thinking": extra.get("reasoning") or extra.get("reasoning_content") or "",
        "calls": [(c.function.name, c.id, json.loads(c.function.arguments))
                  for c in message.tool_calls or []],
        "usage": None if u is None else (u.prompt_tokens, u.completion_tokens),
        "finish": _FINISH.get(choice.finish_reason or "", "unknown"),
        "opaque": {d.get("signature") or d.get("data") for d in details
                   if d.get("signature") or d.get("data")},
    }


def responses_reads(body: bytes) -> dict[str, Any]:
    client = _openai(body)
    last = None
    with client.responses.stream(model="m", input="x") as stream:
        for event in stream:
            last = getattr(event, "response", last)
        try:
            response = stream.get_final_response()
        except RuntimeError:  # the SDK gives no final response for response.incomplete
            response = last
    out = response.output
    u = response.usage
    calls = [(o.name, o.call_id, json.loads(o.arguments)) for o in out
             if o.type == "function_call"]
    calls += [(o.name, o.call_id, {"input": o.input}) for o in out
              if o.type == "custom_tool_call"]
    finish = "unknown"
    if response.status == "completed":
        finish = "tool_call" if calls else "stop"
    elif (response.incomplete_details and
          response.incomplete_details.reason == "max_output_tokens"):
        finish = "length"
    text = "".join(c.text if c.type == "output_text" else c.refusal
                   for o in out if o.type == "message" for c in o.content)
    return {
        "text": text,
        "thinking": "".join(s.text for o in out if o.type == "reasoning"
                            for s in o.summary)
        + "".join(c.text for o in out if o.type == "reasoning" for c in o.content or []),
        "calls": calls,
        "usage": None if u is None else (u.input_tokens, u.output_tokens),
        "finish": finish,
        "opaque": {o.encrypted_content for o in out
                   if o.type == "reasoning" and o.encrypted_content},
    }


def gemini_reads(body: bytes) -> dict[str, Any]:
    client = genai.Client(api_key="x", http_options=genai_types.HttpOptions(
        httpx_client=_serve(httpx, body)))
    chunks = list(client.models.generate_content_stream(model="m", contents="x"))
    parts = [p for c in chunks for cand in c.candidates or [] if not cand.index
             and cand.content for p in cand.content.parts or []]
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    finishes = [cand.finish_reason.value for c in chunks for cand in c.candidates or []
                if cand.finish_reason and not cand.index]
    u = usage[-1] if usage else None
    calls = [(p.function_call.name, p.function_call.id, p.function_call.args) for p in parts
             if p.function_call]
    finish = _FINISH.get(finishes[-1], "unknown") if finishes else None
    return {
        "text": "".join(p.text for p in parts if p.text and not p.thought),
        "thinking": "".join(p.text for p in parts if p.text and p.thought),
        "calls": calls,
        "usage": None if u is None else (u.prompt_token_count,
                                         (u.candidates_token_count or 0)
                                         + (u.thoughts_token_count or 0)),
        "finish": "tool_call" if finish == "stop" and calls else finish,
        "opaque": {base64.b64encode(p.thought_signature).decode() for p in parts
                   if p.thought and p.thought_signature},
    }


READERS = {"anthropic": anthropic_reads, "openai-chat": chat_reads,
           "openai-responses": responses_reads, "gemini": gemini_reads}
