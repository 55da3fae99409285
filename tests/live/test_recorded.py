"""The bodies recorded from a live llama.cpp server (tests/data/live/, see record.py).

Each recording has its provenance next to it (``<file>.meta``). The streams are read
by streamflow and, independently, by hand (:mod:`wirefacts`) and by the official SDK
of their dialect: all three must agree on text, tool calls, usage and finish reason.
The one-body answers validate as the SDK's own response types and say what their
streamed twins say (greedy decoding, the same request); the gateway's non-streaming
body of the same message is what llama.cpp itself answers. Error bodies become typed
errors carrying the server's words. Every stream also goes through every encoder
target and back in tests/encoders/test_matrix.py (its corpus lists tests/data/*).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from realdata import DATA
from wirefacts import body_facts, events, facts

from streamflow.core.errors import HTTPStatusError, StreamflowError
from streamflow.core.events import TextItem
from streamflow.core.message import Message
from streamflow.reactive.sources._http_errors import status_error
from streamflow.wire.decoder import StreamDecoder

LIVE = DATA / "live"
METAS = [json.loads(p.read_text()) for p in sorted(LIVE.glob("*.meta"))]
STREAMS = [m for m in METAS if m["file"].endswith(".sse") and m["status"] == 200]
BODIES = [m for m in METAS if m["file"].endswith(".body") and m["status"] == 200]
ERRORS = [m for m in METAS if m["status"] >= 400]
FINISH = {"text": "stop", "length": "length", "tool": "tool_call", "tools": "tool_call",
          "schema": "stop", "n2": None}
"""What each case is recorded to show, by the last word of its name."""


def ids(metas: list[dict[str, Any]]) -> list[str]:
    return [m["file"] for m in metas]


def body(meta: dict[str, Any]) -> bytes:
    return (LIVE / meta["file"]).read_bytes()


def decoded(meta: dict[str, Any]) -> tuple[str | None, Message]:
    """streamflow's reading of a stream (detecting its dialect); any error is raised."""
    decoder = StreamDecoder()
    decoder.feed(body(meta))
    decoder.close()
    return decoder.dialect, decoder.message


def ours(message: Message) -> dict[str, Any]:
    u = message.usage_metadata
    return {"text": choice_text(message, 0),
            "calls": [(c.name, c.arguments) for c in message.tool_calls],
            "usage": None if u is None else (u.prompt_tokens, u.response_tokens),
            "finish": message.finish_reason}


def choice_text(message: Message, index: int) -> str:
    """The text of one choice (``n > 1``: the others' items carry ``choice_index``)."""
    return "".join(item.text for item in message.items if isinstance(item, TextItem)
                   and (item.provider or {}).get("choice_index", 0) == index)


def need(name: str) -> Path:
    """The recording ``name`` (skipping when it was not recorded: see record.py)."""
    path = LIVE / name
    if not path.exists():
        pytest.skip(f"{name} is not recorded: run tests/live/record.py against a live server")
    return path


def test_recordings_are_present() -> None:
    if not METAS:
        pytest.skip(f"no live recordings in {LIVE}: run tests/live/record.py")
    assert STREAMS and BODIES and ERRORS
    for meta in METAS:
        assert (LIVE / meta["file"]).exists()
        assert meta["server"]["build_info"] and meta["server"]["model_file"].endswith(".gguf")


@pytest.mark.parametrize("meta", STREAMS, ids=ids(STREAMS))
def test_stream_reads_as_the_body_says(meta: dict[str, Any]) -> None:
    dialect, message = decoded(meta)
    assert dialect == meta["dialect"]
    want = facts(meta["dialect"], body(meta))
    assert ours(message) == want
    assert message.text or message.tool_calls, "the recording holds no answer"
    expected = FINISH[meta["case"].rsplit("_", 1)[-1]]
    if meta["case"] == "responses_length":
        expected = "stop"  # llama.cpp's Responses stream says "completed" at a length cut
    if expected is not None:
        assert message.finish_reason == expected


@pytest.mark.parametrize("meta", STREAMS, ids=ids(STREAMS))
def test_official_sdk_reads_the_same(meta: dict[str, Any]) -> None:
    from encoders.sdks import READERS
    try:
        sdk = READERS[meta["dialect"]](body(meta))
    except Exception as exc:
        pytest.skip(f"the official SDK cannot read this llama.cpp stream: {exc!r}")
    _, message = decoded(meta)
    mine = ours(message)
    assert sdk["text"] == mine["text"]
    assert [(name, args) for name, _, args in sdk["calls"]] == mine["calls"]
    assert sdk["usage"] == mine["usage"]
    assert sdk["finish"] == mine["finish"]


def _overlapping(stream: list[tuple[str | None, Any]]) -> bool:
    open_blocks: set[int] = set()
    for _, data in stream:
        if data == "[DONE]":
            continue
        if data.get("type") == "content_block_start":
            if open_blocks:
                return True
            open_blocks.add(data["index"])
        elif data.get("type") == "content_block_stop":
            open_blocks.discard(data["index"])
    return False


def test_overlapping_tool_use_blocks_keep_both_calls_in_order() -> None:
    """Issue 26 item 1: llama.cpp's two parallel tool_use blocks overlap on the wire
    (block 1 starts before block 0 stops); both calls are kept, in index order, as
    the anthropic SDK reads them."""
    from encoders.sdks import READERS
    raw = need("messages_parallel_tools.sse").read_bytes()
    assert _overlapping(events(raw)), "the recording no longer overlaps"
    want = facts("anthropic", raw)
    assert len(want["calls"]) == 2
    decoder = StreamDecoder("anthropic")
    decoder.feed(raw)
    decoder.close()
    assert [(c.name, c.arguments) for c in decoder.message.tool_calls] == want["calls"]
    sdk = READERS["anthropic"](raw)
    assert [(c.name, c.tool_call_id) for c in decoder.message.tool_calls] == \
        [(name, call_id) for name, call_id, _ in sdk["calls"]]
    assert decoder.message.finish_reason == "tool_call"


REPLY = {"openai-chat": "streamflow.wire.dialects.openai_chat.reply",
         "anthropic": "streamflow.wire.dialects.anthropic.reply",
         "openai-responses": "streamflow.wire.dialects.openai_responses.reply"}
"""Where each dialect writes a whole message as one JSON body (the gateway's stream: false)."""
LLAMA_OMITS = {"openai-responses": {("parallel_tool_calls",), ("tool_choice",), ("tools",),
                                    ("usage", "input_tokens_details", "cache_write_tokens"),
                                    ("usage", "output_tokens_details")}}
"""Fields the SDK's response type requires that llama.cpp's one-body answer leaves out
(and so does the gateway's: it does not know the request's tools, and passes llama.cpp's
usage object on as it is)."""

_SDK_TYPES = {"openai-chat": ("openai.types.chat", "ChatCompletion"),
              "anthropic": ("anthropic.types", "Message"),
              "openai-responses": ("openai.types.responses", "Response")}


def sdk_type(dialect: str) -> Any:
    module, name = _SDK_TYPES[dialect]
    return getattr(pytest.importorskip(module), name)


def validate(dialect: str, answer: dict[str, Any]) -> None:
    """``answer`` is the SDK's response type, but for the fields of :data:`LLAMA_OMITS`."""
    try:
        sdk_type(dialect).model_validate(answer)
    except pydantic.ValidationError as exc:
        missing = {e["loc"] for e in exc.errors() if e["type"] == "missing"}
        assert len(missing) == exc.error_count(), exc
        assert missing <= LLAMA_OMITS.get(dialect, set()), exc


def twin(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The streamed recording of the same greedy request, if there is one."""
    path = LIVE / (meta["case"] + ".sse.meta")
    if not path.exists():
        return None
    other = json.loads(path.read_text())
    request = {k: v for k, v in meta["request"].items() if k not in ("stream",
                                                                     "stream_options")}
    same = {k: v for k, v in other["request"].items() if k not in ("stream",
                                                                   "stream_options")}
    return other if same == request and other["status"] == 200 else None


@pytest.mark.parametrize("meta", BODIES, ids=ids(BODIES))
def test_body_parses_and_matches_its_stream(meta: dict[str, Any]) -> None:
    answer = json.loads(body(meta))
    validate(meta["dialect"], answer)
    got = body_facts(meta["dialect"], answer)
    assert got["text"] or got["calls"]
    other = twin(meta)
    if other is None or meta["request"].get("temperature") != 0:
        return
    assert got == facts(other["dialect"], body(other)), "greedy answers differ"


@pytest.mark.parametrize("meta", [m for m in BODIES if twin(m)], ids=ids(
    [m for m in BODIES if twin(m)]))
def test_gateway_body_is_what_the_server_answers(meta: dict[str, Any]) -> None:
    """The gateway's ``stream: false`` body of the streamed twin's message, next to
    llama.cpp's own: the same facts, the same SDK type, timestamps in the same unit."""
    message_body = importlib.import_module(REPLY[meta["dialect"]]).message_body
    server = json.loads(body(meta))
    stream = twin(meta)
    assert stream is not None
    _, message = decoded(stream)
    ours_body = message_body(message)
    validate(meta["dialect"], ours_body)
    if meta["request"].get("temperature") == 0:
        assert body_facts(meta["dialect"], ours_body) == body_facts(meta["dialect"], server)
    for key in ("created", "created_at"):
        if key in server:
            assert abs(ours_body[key] - server[key]) < 86400 * 30, \
                f"{key}: {ours_body[key]} next to the server's {server[key]}"


def test_n2_body_keeps_its_choices_apart() -> None:
    answer = json.loads(need("chat_n2.body").read_bytes())
    choices = answer["choices"]
    assert [c["index"] for c in choices] == [0, 1]
    assert all(c["message"]["content"] for c in choices)


def test_n2_stream_keeps_its_choices_apart() -> None:
    meta = json.loads(need("chat_n2.sse.meta").read_text())
    raw = body(meta)
    indexes = {c["index"] for _, d in events(raw) if d != "[DONE]" for c in d["choices"]}
    assert indexes == {0, 1}
    _, message = decoded(meta)
    assert choice_text(message, 0) == facts("openai-chat", raw)["text"]
    second = "".join(c["delta"].get("content") or "" for _, d in events(raw) if d != "[DONE]"
                     for c in d["choices"] if c["index"] == 1)
    assert second and choice_text(message, 1) == second


@pytest.mark.parametrize("name", ["chat_schema.sse", "chat_schema.body"])
def test_structured_output_is_the_schema(name: str) -> None:
    meta = json.loads(need(name + ".meta").read_text())
    if name.endswith(".sse"):
        text = decoded(meta)[1].text
    else:
        text = json.loads(body(meta))["choices"][0]["message"]["content"]
    value = json.loads(text)
    schema = meta["request"]["response_format"]["json_schema"]["schema"]
    assert set(value) == set(schema["required"])
    assert all(isinstance(value[k], str) and value[k] for k in schema["required"])


@pytest.mark.parametrize("meta", ERRORS, ids=ids(ERRORS))
def test_error_body_is_a_typed_error(meta: dict[str, Any]) -> None:
    raw = body(meta)
    envelope = json.loads(raw)
    words = envelope["error"]["message"]
    error = status_error(meta["status"], meta["headers"], raw, meta["dialect"])
    assert isinstance(error, HTTPStatusError) and isinstance(error, StreamflowError)
    assert error.status == meta["status"]
    assert error.status >= 400  # llama.cpp answers a body that is not JSON with a 500
    assert error.message.endswith(words)


def test_meta_files_name_their_bodies() -> None:
    if not LIVE.exists():
        pytest.skip(f"{LIVE} is not recorded: run tests/live/record.py")
    bodies = {p.name for p in LIVE.iterdir() if p.suffix in (".sse", ".body")}
    assert bodies == {m["file"] for m in METAS}
    assert all(Path(m["file"]).stem == m["case"] for m in METAS)
