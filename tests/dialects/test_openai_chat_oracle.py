"""Oracle: the official ``openai`` SDK and streamflow read the same bytes.

Every recording of ``openai_chat``, ``deepseek`` and ``openrouter`` in
../shared/fixtures/real/ (skipped with a reason when absent) and every authored
fixture in tests/data/openai_chat/ goes through both; text, refusal, reasoning,
tool names/ids/arguments, usage (cost included), finish reason, logprobs,
annotations, audio and images must agree. The SDK gets the body through
``httpx.MockTransport`` and is read with ``client.chat.completions.stream(...)``
(``get_final_completion``); the error cases also with ``create(stream=True)``.

``.jsonl`` recordings hold one data payload per line, their ``[DONE]`` line
stripped by the recorder (see ../shared/README.md). The SDK is given the SSE body
rebuilt from them (``data: <line>\\n\\n`` each, then ``data: [DONE]\\n\\n``);
streamflow reads the same lines with ``framing="ndjson"`` plus one appended
``[DONE]`` line, the same terminator the SDK body gets. Without it streamflow
raises ``IncompleteStreamError`` with the whole partial message (asserted), where
the SDK returns the completion as if nothing were missing.

Where the SDK differs, the difference is asserted, not hidden:

* OpenRouter repeats ``role: "assistant"`` on every chunk and the SDK's
  ``accumulate_delta`` concatenates strings, so its ``message.role`` becomes
  ``"assistantassistant..."``; it concatenates ``reasoning_details[].format`` and
  ``.id`` the same way. streamflow keeps each detail's fields once.
* An in-band error chunk makes the SDK raise ``APIError`` and drop what came
  before; streamflow raises ``ProviderError`` (code, type) with the partial message.
* ``finish_reason: "length"`` makes the SDK's stream helper raise
  ``LengthFinishReasonError`` (the completion rides on the exception); streamflow
  returns the message with ``finish_reason="length"``.
* The SDK concatenates audio chunks' base64 strings (``"AAE=AgM="``, not base64 of
  the whole); streamflow decodes each chunk to bytes.
* A stream without ``[DONE]`` is complete for the SDK; streamflow raises
  ``IncompleteStreamError`` (seed 004: "treat a missing terminator as incomplete").
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from realdata import REAL, framing_for, real_body

from streamflow.core.errors import IncompleteStreamError, ProviderError
from streamflow.core.events import InlineDataItem, TextItem
from streamflow.core.message import Message
from streamflow.wire.decoder import StreamDecoder

DATA = Path(__file__).resolve().parent.parent / "data" / "openai_chat"
FOLDERS = ("openai_chat", "deepseek", "openrouter")
KNOWN = ["openai_chat/oai_content_logprobs.sse", "openai_chat/oai_max_tokens_length.sse",
         "openai_chat/oai_nonstrict_tool.sse", "openai_chat/oai_text_parse_nothing.sse",
         "deepseek/vercel_deepseek_tool_call.jsonl", "openrouter/pyd_or_stream_error.sse",
         "openrouter/pyd_or_streaming_reasoning.sse"]
RECORDINGS = sorted({f"{p.parent.name}/{p.name}" for folder in FOLDERS
                     for p in (REAL / folder).glob("*") if p.suffix in (".sse", ".jsonl")}
                    | set(KNOWN))
FIXTURES = sorted(p.name for p in DATA.glob("*.sse"))


# -- the two readers ------------------------------------------------------------
def sdk_client(body: bytes) -> openai.OpenAI:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    return openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def sdk_final(body: bytes) -> Any:
    """The SDK's final completion, or the exception it raised."""
    client = sdk_client(body)
    try:
        with client.chat.completions.stream(model="m", messages=[{"role": "user",
                                                                   "content": "hi"}]) as s:
            return s.get_final_completion()
    except openai.LengthFinishReasonError as exc:  # documented: the SDK raises on length
        return exc.completion
    except openai.APIError as exc:
        return exc


def bodies(relative: str) -> tuple[bytes, bytes, str | None]:
    """(SDK body, streamflow body, streamflow framing) for one recording."""
    raw = real_body(relative)
    framing = framing_for(relative)
    if framing != "ndjson":
        return raw, raw, framing
    lines = [line for line in raw.splitlines() if line.strip()]
    sdk = b"".join(b"data: " + line + b"\n\n" for line in lines) + b"data: [DONE]\n\n"
    return sdk, b"\n".join(lines) + b"\n[DONE]\n", framing


def ours(body: bytes, framing: str | None = None) -> Message | Exception:
    dec = StreamDecoder("openai-chat", framing=framing)
    try:
        dec.feed(body)
        dec.close()
    except Exception as exc:
        return exc
    return dec.message


# -- comparison -------------------------------------------------------------------
def texts(msg: Message, choice: int, refusal: bool) -> str:
    return "".join(i.text for i in msg.items if isinstance(i, TextItem)
                   and (i.provider or {}).get("choice_index", 0) == choice
                   and bool((i.provider or {}).get("refusal")) == refusal)


def of_choice(msg: Message, choice: int) -> list[Any]:
    return [i for i in msg.items if (i.provider or {}).get("choice_index", 0) == choice]


def provider_list(items: list[Any], key: str) -> list[Any]:
    return [x for i in items if isinstance(i, TextItem) for x in (i.provider or {}).get(key, [])]


def compare(final: Any, msg: Message) -> None:
    """Everything the SDK's final completion says, streamflow's message says too."""
    assert msg.complete and msg.id == final.id and msg.model == final.model
    for ch in final.choices:
        m, items = ch.message, of_choice(msg, ch.index)
        extra = m.model_extra or {}
        assert texts(msg, ch.index, refusal=False) == (m.content or "")
        assert texts(msg, ch.index, refusal=True) == (m.refusal or "")
        thinking = "".join(i.thinking for i in items if i.type == "thinking.done")
        assert thinking == (extra.get("reasoning") or extra.get("reasoning_content") or "")
        calls = [(c.id, c.function.name, c.function.arguments) for c in m.tool_calls or []]
        assert [(i.tool_call_id, i.name, i.arguments) for i in items
                if i.type == "tool_call.done"] == [
            (cid, name, json.loads(args or "{}")) for cid, name, args in calls]
        raw_finish = msg.provider["finish_reason"] if ch.index == 0 else next(
            c["finish_reason"] for c in msg.provider["choices"] if c["index"] == ch.index)
        assert raw_finish == ch.finish_reason
        if ch.logprobs is not None:
            assert provider_list([i for i in items if not (i.provider or {}).get("refusal")],
                                 "logprobs") == [lp.model_dump() for lp in
                                                 ch.logprobs.content or []]
        assert provider_list(items, "annotations") == [a.model_dump() for a in
                                                       m.annotations or []]
        for image, item in zip(extra.get("images") or [], [
                i for i in items if isinstance(i, InlineDataItem)
                and "artifact" not in (i.provider or {})], strict=False):
            url = image["image_url"]["url"]
            assert item.data == (base64.b64decode(url.split(",", 1)[1])
                                 if url.startswith("data:") else b"")
    usage = final.usage
    if usage is not None:
        got = msg.usage_metadata
        assert got is not None
        assert (got.prompt_tokens, got.response_tokens) == (usage.prompt_tokens,
                                                            usage.completion_tokens)
        details = usage.prompt_tokens_details
        cached = details.cached_tokens if details else (usage.model_extra or {}).get(
            "prompt_cache_hit_tokens")
        assert got.cached_tokens == cached
        done = usage.completion_tokens_details
        assert got.thoughts_tokens == (done.reasoning_tokens if done else None)
        assert got.cost == (usage.model_extra or {}).get("cost")


# -- real recordings -----------------------------------------------------------------
@pytest.mark.parametrize("relative", RECORDINGS)
def test_real_recording_agrees_with_the_sdk(relative: str) -> None:
    sdk_body, body, framing = bodies(relative)
    final, msg = sdk_final(sdk_body), ours(body, framing)
    if isinstance(final, openai.APIError):  # in-band error chunk: both raise
        assert isinstance(msg, ProviderError)
        assert msg.message == final.message and msg.body["error"] == final.body
        assert msg.partial is not None and not msg.partial.complete
        return
    assert isinstance(msg, Message), msg
    compare(final, msg)


def test_openrouter_reasoning_role_and_format_are_not_concatenated() -> None:
    relative = "openrouter/pyd_or_streaming_reasoning.sse"
    sdk_body, body, framing = bodies(relative)
    final, msg = sdk_final(sdk_body), ours(body, framing)
    assert isinstance(msg, Message)
    m = final.choices[0].message
    assert m.role.startswith("assistantassistant")  # the SDK's concatenation
    sdk_detail = m.model_extra["reasoning_details"][0]
    assert sdk_detail["format"].startswith("anthropic-claude-v1anthropic-claude-v1")
    [think, answer] = msg.items
    assert think.fidelity is not None
    [detail] = think.fidelity["reasoning_details"]
    assert detail["format"] == "anthropic-claude-v1"
    assert detail["text"] == sdk_detail["text"] == m.model_extra["reasoning"]
    assert think.fidelity["signature"] == detail["signature"] == sdk_detail["signature"]
    assert msg.role == "assistant" and answer.text == m.content


def test_openrouter_error_keeps_what_the_sdk_user_had_streamed() -> None:
    relative = "openrouter/pyd_or_stream_error.sse"
    sdk_body, body, framing = bodies(relative)
    seen = []
    with pytest.raises(openai.APIError) as sdk_err:
        for c in sdk_client(sdk_body).chat.completions.create(model="m", messages=[],
                                                              stream=True):
            seen.append((c.choices[0].delta.model_extra or {}).get("reasoning") or "")
    err = ours(body, framing)
    assert isinstance(err, ProviderError)
    assert (err.code, err.message) == (400, sdk_err.value.message)
    assert err.partial is not None and err.partial.thinking == "".join(seen)
    assert err.partial.usage_metadata is not None  # the error chunk carried usage
    assert err.partial.usage_metadata.thoughts_tokens == 11


def test_a_jsonl_recording_ends_with_its_finish_chunk_like_the_sdk_reads_it() -> None:
    """One payload per line, where ``[DONE]`` cannot appear: the finish chunk ends it."""
    relative = "deepseek/vercel_deepseek_tool_call.jsonl"
    sdk_body, body, framing = bodies(relative)
    cut = body[: body.rindex(b"[DONE]")]
    message = ours(cut, framing)
    final = sdk_final(sdk_body.replace(b"data: [DONE]\n\n", b""))
    assert final.choices[0].finish_reason == "tool_calls"
    assert isinstance(message, Message) and message.complete
    assert message.finish_reason == "tool_call"
    assert [c.name for c in message.tool_calls] == ["weather"]


def test_an_sse_body_without_done_is_incomplete_for_streamflow_only() -> None:
    relative = "deepseek/vercel_deepseek_tool_call.jsonl"
    sdk_body, _, _ = bodies(relative)
    cut = sdk_body.replace(b"data: [DONE]\n\n", b"")
    err = ours(cut)
    assert isinstance(err, IncompleteStreamError)
    final = sdk_final(cut)
    assert final.choices[0].finish_reason == "tool_calls"  # the SDK does not notice
    assert err.partial is not None
    assert [c.name for c in err.partial.tool_calls] == ["weather"]  # nothing received lost


# -- authored fixtures ---------------------------------------------------------------
@pytest.mark.parametrize("name", FIXTURES)
def test_authored_fixture_agrees_with_the_sdk(name: str) -> None:
    body = (DATA / name).read_bytes()
    final, msg = sdk_final(body), ours(body)
    if name == "no_done.sse":
        assert isinstance(msg, IncompleteStreamError) and not isinstance(final, Exception)
        assert msg.partial is not None and msg.partial.text == final.choices[0].message.content
        return
    if isinstance(final, openai.APIError):
        assert isinstance(msg, ProviderError) and msg.message == final.message
        return
    assert isinstance(msg, Message), msg
    compare(final, msg)


def test_audio_chunks_are_decoded_not_concatenated_as_base64() -> None:
    body = (DATA / "audio.sse").read_bytes()
    final, msg = sdk_final(body), ours(body)
    assert isinstance(msg, Message)
    audio = final.choices[0].message.audio
    [item] = msg.items
    assert isinstance(item, InlineDataItem) and item.data == b"\x00\x01\x02\x03"
    assert audio.data == "AAE=AgM="  # the SDK joins base64 strings, padding and all
    assert (audio.id, audio.transcript) == (item.fidelity["audio_id"],  # type: ignore[index]
                                            item.provider["transcript"])  # type: ignore[index]
