"""Issue 34.5: several choices (``n > 1``, Gemini's ``candidateCount``) read as the live server
answered them: the message keeps them apart (``Message.choices``; ``text``, ``thinking``,
``tool_calls`` are the first choice's), the openai-chat encoder writes them back apart (the
official openai SDK sees each with its own text), a target without choices writes the first
only, and what acts on a message (the next turn, tool dispatch) takes the first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import streamflow
from streamflow import Message, StreamDecoder, ToolDispatchSink, ToolRegistry, assemble, encode
from streamflow.core.errors import IncompleteStreamError, ProtocolError
from streamflow.core.events import TextItem, UniEvent, choice_index

DATA = Path(__file__).parent / "data"
LIVE_N2 = (DATA / "live" / "chat_n2.sse").read_bytes()  # llama.cpp, n=2 (tests/live)
N2 = (DATA / "openai_chat" / "n2_choices.sse").read_bytes()
GEMINI_2 = (DATA / "gemini" / "two_candidates.sse").read_bytes()


def chunks(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.decode().splitlines()
            if line.startswith("data: {")]


def raw_texts(body: bytes) -> dict[int, str]:
    """Each choice's content as the server sent it."""
    out: dict[int, str] = {}
    for chunk in chunks(body):
        for choice in chunk.get("choices") or ():
            text = (choice.get("delta") or {}).get("content") or ""
            out[choice["index"]] = out.get(choice["index"], "") + text
    return out


def events_of(body: bytes, dialect: str) -> list[UniEvent]:
    decoder = StreamDecoder(dialect)
    return decoder.feed(body) + decoder.close()


def chat_body(*chunk_list: dict[str, Any], usage: dict[str, Any] | None = None) -> bytes:
    head = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1790000000,
            "model": "m"}
    out = [{**head, "choices": [c]} for c in chunk_list]
    if usage is not None:
        out.append({**head, "choices": [], "usage": usage})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in out) + \
        b"data: [DONE]\n\n"


def call(index: int, call_id: str, name: str, args: str) -> dict[str, Any]:
    return {"index": index, "delta": {"tool_calls": [
        {"index": 0, "id": call_id, "type": "function",
         "function": {"name": name, "arguments": args}}]}, "finish_reason": None}


# choice 0 thinks and answers; choice 1 thinks and calls a tool
TOOLS_N2 = chat_body(
    {"index": 0, "delta": {"role": "assistant", "reasoning": "zero thinks"},
     "finish_reason": None},
    {"index": 1, "delta": {"role": "assistant", "reasoning": "one thinks"},
     "finish_reason": None},
    call(1, "call_1", "get_weather", '{"city": "Oslo"}'),
    {"index": 0, "delta": {"content": "It is sunny."}, "finish_reason": None},
    {"index": 0, "delta": {}, "finish_reason": "stop"},
    {"index": 1, "delta": {}, "finish_reason": "tool_calls"},
    usage={"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16})


# -- the message ----------------------------------------------------------------------

def test_a_live_n2_answer_keeps_its_choices_apart() -> None:
    """The recording of the issue: text ran both choices together ("...creature.I'm glad")."""
    msg = assemble(LIVE_N2, "openai-chat")
    want = raw_texts(LIVE_N2)
    assert len(want) == 2 and all(want.values())
    assert msg.text == want[0]
    assert [(c.choice_index, c.text, c.finish_reason) for c in msg.choices] == [
        (0, want[0], "stop"), (1, want[1], "stop")]
    assert msg.choices[1].usage is msg.usage  # the API reports one usage for all choices
    assert msg.choice(1) == msg.choices[1] and msg.choice(0).text == want[0]
    assert msg.choice(7).items == [] and msg.choice(7).choice_index == 7
    assert len(msg.items) == 2  # items keeps every choice, in stream order (lossless)


def test_each_choice_has_its_own_finish_reason() -> None:
    msg = assemble(N2, "openai-chat")
    assert [(c.text, c.finish_reason) for c in msg.choices] == [
        ("Hi!", "stop"), ("Hello there", "length")]
    assert msg.finish_reason == "stop"
    assert msg.provider["choice_finish_reasons"] == {"0": "stop", "1": "length"}


def test_gemini_candidates_are_choices_too() -> None:
    msg = assemble(GEMINI_2, "gemini")
    assert msg.text == "Red apples."
    assert [(c.choice_index, c.text, c.finish_reason) for c in msg.choices] == [
        (0, "Red apples.", "stop"), (1, "Blue skies.", "stop")]


def test_thinking_and_tool_calls_are_the_first_choices() -> None:
    msg = assemble(TOOLS_N2, "openai-chat")
    first, second = msg.choices
    assert (msg.text, msg.thinking, msg.tool_calls) == ("It is sunny.", "zero thinks", [])
    assert msg.finish_reason == "stop"  # choice 0 called nothing
    assert (second.text, second.thinking) == ("", "one thinks")
    assert [(c.name, c.arguments) for c in second.tool_calls] == [
        ("get_weather", {"city": "Oslo"})]
    assert second.finish_reason == "tool_call"
    assert first.tool_calls == [] and first.items == [
        i for i in msg.items if choice_index(i) == 0]


def test_one_choice_is_the_message_itself() -> None:
    msg = assemble(chat_body({"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}),
                   "openai-chat")
    assert msg.choices == [msg] and msg.choices[0] is msg and msg.choice(0) is msg
    assert "choice_finish_reasons" not in msg.provider


def test_a_cut_stream_keeps_the_choices_apart_in_its_partial() -> None:
    body = N2[:N2.index(b"data: [DONE]")]
    with pytest.raises(IncompleteStreamError) as caught:
        assemble(body, "openai-chat")
    partial = caught.value.partial
    assert partial is not None and partial.text == "Hi!"
    assert [c.text for c in partial.choices] == ["Hi!", "Hello there"]


def test_a_uni_chain_keeps_the_choices() -> None:
    decoder = StreamDecoder("openai-chat")
    events = decoder.feed(LIVE_N2) + decoder.close()
    msg = decoder.message
    for target in ("uni", "uni-jsonl"):
        again = assemble(b"".join(encode(events, target)), target)
        assert again == msg
        assert [(c.text, c.finish_reason) for c in again.choices] == [
            (c.text, c.finish_reason) for c in msg.choices]


# -- openai-chat writes the choices back apart ------------------------------------------

@pytest.mark.parametrize("body", [LIVE_N2, N2, TOOLS_N2], ids=["live", "n2", "tools"])
def test_openai_chat_round_trip_is_exact_per_choice(body: bytes) -> None:
    msg = assemble(body, "openai-chat")
    ours = b"".join(encode(events_of(body, "openai-chat"), "openai-chat"))
    again = assemble(ours, "openai-chat")
    assert again.items == msg.items and again.usage == msg.usage
    assert [(c.text, c.thinking, c.tool_calls, c.finish_reason) for c in again.choices] == [
        (c.text, c.thinking, c.tool_calls, c.finish_reason) for c in msg.choices]


@pytest.mark.parametrize("body", [LIVE_N2, N2, TOOLS_N2], ids=["live", "n2", "tools"])
def test_the_openai_sdk_reads_each_choice_from_our_bytes(body: bytes) -> None:
    openai = pytest.importorskip("openai")
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    msg = assemble(body, "openai-chat")
    ours = b"".join(encode(events_of(body, "openai-chat"), "openai-chat"))
    state: Any = ChatCompletionStreamState()
    for chunk in chunks(ours):
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    try:
        final = state.get_final_completion()
    except openai.LengthFinishReasonError as exc:  # a choice cut by length: the SDK raises
        final = exc.completion
    assert [c.index for c in final.choices] == [c.choice_index for c in msg.choices]
    for theirs, mine in zip(final.choices, msg.choices, strict=True):
        assert (theirs.message.content or "") == mine.text
        extra = theirs.message.model_extra or {}
        assert (extra.get("reasoning") or "") == mine.thinking
        assert [(t.function.name, json.loads(t.function.arguments))
                for t in theirs.message.tool_calls or []] == [
            (t.name, t.arguments) for t in mine.tool_calls]
    # and through the client, as an application streams it
    def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=ours)
    client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    try:
        with client.chat.completions.stream(model="m", n=2, messages=[
                {"role": "user", "content": "hi"}]) as stream:
            completion = stream.get_final_completion()
    except openai.LengthFinishReasonError as exc:  # a choice cut by length: the SDK raises
        completion = exc.completion
    assert [c.message.content or "" for c in completion.choices] == [
        c.text for c in msg.choices]


def test_gemini_candidates_go_to_openai_chat_choices_and_back() -> None:
    ours = b"".join(encode(events_of(GEMINI_2, "gemini"), "openai-chat"))
    assert raw_texts(ours) == {0: "Red apples.", 1: "Blue skies."}
    back = b"".join(encode(events_of(ours, "openai-chat"), "gemini"))
    assert [c.text for c in assemble(back, "gemini").choices] == ["Red apples.", "Blue skies."]


# -- a target without choices writes the first only -------------------------------------

@pytest.mark.parametrize("target", ["anthropic", "openai-responses", "ollama"])
@pytest.mark.parametrize(("body", "dialect"), [(LIVE_N2, "openai-chat"), (TOOLS_N2, "openai-chat"),
                                               (GEMINI_2, "gemini")],
                         ids=["live", "tools", "gemini"])
def test_a_target_without_choices_writes_the_first(body: bytes, dialect: str,
                                                   target: str) -> None:
    msg = assemble(body, dialect)
    out = b"".join(encode(events_of(body, dialect), target))
    back = assemble(out, target)
    assert (back.text, back.thinking, back.tool_calls) == (msg.text, msg.thinking,
                                                           msg.tool_calls)
    assert len(back.choices) == 1
    for other in msg.choices[1:]:
        for item in other.items:
            if isinstance(item, TextItem) and item.text:
                assert item.text.encode() not in out
    assert b"choice_finish_reasons" not in out and b'"choices"' not in out


def test_the_anthropic_sdk_reads_the_first_choice() -> None:
    pytest.importorskip("anthropic")
    import sys
    sys.path.insert(0, str(Path(__file__).parent / "encoders"))
    from sdks import anthropic_reads  # type: ignore[import-not-found]

    msg = assemble(LIVE_N2, "openai-chat")
    read = anthropic_reads(b"".join(encode(events_of(LIVE_N2, "openai-chat"), "anthropic")))
    assert read["text"] == msg.text == raw_texts(LIVE_N2)[0]


@pytest.mark.parametrize("target", ["vercel-ui", "ag-ui"])
def test_a_ui_message_shows_the_first_choice(target: str) -> None:
    msg = assemble(GEMINI_2, "gemini")
    out = b"".join(encode(events_of(GEMINI_2, "gemini"), target))
    assert b"Red" in out and b" apples." in out
    assert b"Blue" not in out and b"skies" not in out
    assert b"choice_finish_reasons" not in out and b"candidate_index" not in out
    assert msg.choices[1].text == "Blue skies."


# -- what acts on the message takes the first choice -----------------------------------

def test_the_next_turn_sends_the_first_choice_back() -> None:
    from streamflow.app.providers import AnthropicProvider, OpenAIChatProvider
    from streamflow.core.requests import Turn

    msg = assemble(TOOLS_N2, "openai-chat")
    turn = Turn.assistant(msg)
    assert [getattr(p, "text", None) or getattr(p, "thinking", None) for p in turn.parts] == [
        "zero thinks", "It is sunny."]
    conversation = [Turn.user("Hi"), turn]
    chat = OpenAIChatProvider(model="m", api_key="k").request(conversation).json["messages"][-1]
    assert chat["content"] == "It is sunny." and "tool_calls" not in chat
    claude = AnthropicProvider(model="m", api_key="k").request(conversation).json["messages"][-1]
    # (unsigned thinking is not sent back to Claude)
    assert claude["content"] == [{"type": "text", "text": "It is sunny."}]


async def _dispatched(body: bytes) -> list[str]:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """The weather."""
        ran.append(city)
        return "sunny"

    dispatch = ToolDispatchSink(ToolRegistry([get_weather]))
    message = await streamflow.run(body, dispatch, dialect="openai-chat")
    assert isinstance(message, Message)
    return [c.tool_call_id for c in dispatch.calls] + ran


@pytest.mark.anyio
async def test_tool_dispatch_runs_the_first_choices_calls_only() -> None:
    # choice 0 and choice 1 both call; the turn ends in tool_call (choice 0's finish)
    body = chat_body(call(0, "call_0", "get_weather", '{"city": "Rome"}'),
                     call(1, "call_1", "get_weather", '{"city": "Oslo"}'),
                     {"index": 0, "delta": {}, "finish_reason": "tool_calls"},
                     {"index": 1, "delta": {}, "finish_reason": "tool_calls"})
    assert await _dispatched(body) == ["call_0", "Rome"]


# -- the uni dialect checks the counts so far -------------------------------------------

def test_uni_refuses_counts_so_far_that_are_no_usage() -> None:
    good = events_of((DATA / "anthropic" / "seed000_text.sse").read_bytes(), "anthropic")
    body = b"".join(encode(good, "uni-jsonl")).decode().splitlines()
    first = json.loads(body[0])
    assert first["provider"]["usage_so_far"]["prompt_tokens"] == 0
    for bad in ({"prompt_tokens": -1}, {"response_tokens": "7"}, [1], {"cost": "x"}):
        first["provider"]["usage_so_far"] = bad
        mutated = "\n".join([json.dumps(first), *body[1:]]).encode()
        with pytest.raises(ProtocolError):
            assemble(mutated, "uni-jsonl")
