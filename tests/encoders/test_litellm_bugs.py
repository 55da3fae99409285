"""The translation bugs LiteLLM's users report (BerriAI/litellm), one test each: none
of them can happen with streamflow's encoders, read by the official SDKs."""

from __future__ import annotations

import json

import openai
import pytest
from builders import call, stream, text, thinking
from corpus import convert, read_back, source
from sdks import READERS, anthropic_reads, chat_reads, gemini_reads, responses_reads

from streamflow import encode
from streamflow.core.errors import ProviderError
from streamflow.core.events import Usage

SIG = "EqQBCkgIARABGAIiQL2kz8Ur0fW5v6oVb9h3bQ=="


def body(events: list, target: str) -> bytes:
    return b"".join(encode(events, target))


def test_29428_thinking_keeps_its_signature_never_an_empty_one() -> None:
    events = stream(thinking("Let me think.", signature=SIG), text("Hi."))
    raw = body(events, "anthropic")
    assert b'"signature":""' not in raw
    assert anthropic_reads(raw)["opaque"] == {SIG}
    # from OpenRouter's reasoning_details (signature inside) to the anthropic SDK
    src = source("real:openrouter/pyd_or_streaming_reasoning.sse")
    assert anthropic_reads(convert(src, "anthropic"))["thinking"] == src.message.thinking
    # no signature at all: no signature_delta, rather than an empty one
    bare = body(stream(thinking("hmm"), text("ok")), "anthropic")
    assert b"signature_delta" not in bare


def test_25869_gemini_thought_signatures_come_back_byte_for_byte() -> None:
    src = source("data:gemini/thinking_parallel_calls.sse")
    sigs = [(i.kind, i.fidelity) for i in src.message.items if i.fidelity]
    assert sigs, "the recording carries thought signatures"
    direct = read_back(convert(src, "gemini"), "gemini").message
    assert [(i.kind, i.fidelity) for i in direct.items if i.fidelity] == sigs
    # through openai-chat (extra_content / reasoning_details) and back to gemini
    via = read_back(convert(src, "openai-chat"), "openai-chat")
    again = read_back(convert(via, "gemini"), "gemini").message
    assert [(i.kind, i.fidelity) for i in again.items if i.fidelity] == sigs
    assert gemini_reads(convert(src, "gemini"))["opaque"]


@pytest.mark.parametrize("target", list(READERS))
def test_5063_a_tool_call_without_arguments_is_an_empty_object(target: str) -> None:
    events = stream(call("get_time", "call_1"), finish="tool_call")
    raw = body(events, target)
    assert READERS[target](raw)["calls"][0][2] == {}
    # the readers json.loads the openai SDKs' argument strings: "" would raise there


@pytest.mark.parametrize("rec", ["data:openai_chat/parallel_interleaved.sse",
                                 "data:gemini/thinking_parallel_calls.sse",
                                 "data:openai_responses/reasoning_parallel_tools.sse"])
@pytest.mark.parametrize("target", list(READERS))
def test_7621_parallel_tool_calls_stay_apart(rec: str, target: str) -> None:
    src = source(rec)
    calls = src.message.tool_calls
    assert len(calls) >= 2
    theirs = READERS[target](convert(src, target))["calls"]
    assert [(name, args) for name, _, args in theirs] == [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("target", list(READERS))
def test_8349_23847_usage_reaches_every_target(target: str) -> None:
    usage = Usage(prompt_tokens=120, response_tokens=33, cached_tokens=20, thoughts_tokens=7)
    events = stream(thinking("a"), text("b"), usage=usage)
    assert READERS[target](body(events, target))["usage"] == (120, 33)
    back = read_back(body(events, target), target).message.usage_metadata
    assert back is not None
    assert (back.prompt_tokens, back.response_tokens, back.cached_tokens,
            back.thoughts_tokens) == (120, 33, 20, 7)


def test_29223_a_mid_stream_error_is_raised_by_the_responses_sdk() -> None:
    events = stream(text("Partial answer"))[:2]  # one fragment, then the stream fails
    error = ProviderError("upstream overloaded", code=529, type="overloaded_error")
    raw = _fail("openai-responses", events, error)
    with pytest.raises(openai.APIError, match="upstream overloaded"):
        responses_reads(raw)
    back = read_back(raw, "openai-responses")
    assert isinstance(back.error, ProviderError)
    assert back.error.partial is not None and back.error.partial.text == "Partial answer"
    with pytest.raises(openai.APIError):  # the chat SDK too (top-level error object)
        chat_reads(_whole("openai-chat", events, error))


def _fail(target: str, events: list, error: ProviderError) -> bytes:
    """The body an encoder writes for ``events`` and then the in-band ``error``."""
    from streamflow.wire.dialects import get_encoder
    enc = get_encoder(target)()
    return b"".join(enc.feed(ev) for ev in events) + enc.fail(error)


def _whole(target: str, events: list, error: ProviderError) -> bytes:
    def failing():
        yield from events
        raise error
    out = []
    with pytest.raises(ProviderError):
        for chunk in encode(failing(), target):
            out.append(chunk)
    return b"".join(out)


@pytest.mark.parametrize("rec", ["data:openai_chat/parallel_interleaved.sse",
                                 "data:gemini/parts_mix.sse",
                                 "data:openai_responses/custom_tool_server_tools.sse"])
def test_13373_every_anthropic_delta_lands_in_the_open_block_of_its_type(rec: str) -> None:
    raw = convert(source(rec), "anthropic")
    open_blocks: dict[int, str] = {}
    expect = {"text_delta": "text", "citations_delta": "text", "thinking_delta": "thinking",
              "signature_delta": "thinking", "input_json_delta": "tool_use"}
    started = 0
    for frame in raw.split(b"\n\n"):
        if not frame.strip():
            continue
        name, data = frame.split(b"\n", 1)
        ev = json.loads(data[len(b"data: "):])
        assert name == b"event: " + ev["type"].encode()  # the SDK dispatches on the name
        if ev["type"] == "content_block_start":
            assert ev["index"] == started and not open_blocks  # in order, one at a time
            started += 1
            open_blocks[ev["index"]] = ev["content_block"]["type"]
        elif ev["type"] == "content_block_delta":
            kind = expect.get(ev["delta"]["type"])
            assert kind is None or open_blocks[ev["index"]] == kind
        elif ev["type"] == "content_block_stop":
            del open_blocks[ev["index"]]
    anthropic_reads(raw)  # and the SDK accepts it
