"""OpenRouter image-generation streams and raw speech streams as inline_data items."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import DATA

from streamflow import StreamDecoder, assemble
from streamflow.core.errors import (
    IncompleteStreamError,
    ProtocolError,
    ProviderError,
    StreamflowError,
)
from streamflow.core.events import InlineDataItem

MEDIA = DATA / "openrouter_media"
PNG = b"\x89PNG\r\n\x1a\n"


def frames(name: str) -> list[dict]:
    text = (MEDIA / name).read_text()
    return [json.loads(line[6:]) for line in text.splitlines()
            if line.startswith("data: {")]


def test_every_image_is_its_own_item_and_previews_are_marked() -> None:
    dec = StreamDecoder("auto")
    events = dec.feed((MEDIA / "image_two.sse").read_bytes()) + dec.close()
    assert dec.dialect == "openrouter-image"
    kinds = [ev.item.type if ev.item else ev.event_type for ev in events]
    assert kinds == ["inline_data.delta", "inline_data.done"] * 4 + ["stop"]
    message = dec.message
    items = message.items
    assert all(isinstance(i, InlineDataItem) and i.mime_type == "image/png" for i in items)
    previews = [i for i in items if i.provider and i.provider["partial"]]
    finals = [i for i in items if i.provider and not i.provider["partial"]]
    assert [p.provider["index"] for p in previews] == [0, 1]  # type: ignore[index]
    assert previews[0].provider["partial_image_index"] == 0  # type: ignore[index]
    assert [f.provider["index"] for f in finals] == [0, 1]  # type: ignore[index]
    sent = {f["index"]: base64.b64decode(f["b64_json"]) for f in frames("image_two.sse")
            if f["type"] == "image_generation.completed"}
    assert [f.data for f in finals] == [sent[0], sent[1]]  # type: ignore[union-attr]
    assert all(f.data.startswith(PNG) for f in finals)  # type: ignore[union-attr]
    assert message.finish_reason == "stop"
    usage = message.usage_metadata
    assert usage is not None and usage.cost == 0.08 and usage.prompt_tokens == 12
    assert usage.provider is not None and usage.provider["output_images"] == 2


def test_in_band_error_keeps_the_preview_that_arrived() -> None:
    with pytest.raises(ProviderError, match="provider became unavailable") as info:
        assemble((MEDIA / "image_error.sse").read_bytes())
    err = info.value
    assert err.code == 503 and err.type == "provider_unavailable" and err.retryable
    assert err.partial is not None
    (preview,) = err.partial.items
    assert isinstance(preview, InlineDataItem) and preview.provider["partial"] is True  # type: ignore[index]


def test_stream_without_done_is_incomplete() -> None:
    body = (MEDIA / "image_two.sse").read_bytes().replace(b"data: [DONE]\n\n", b"")
    with pytest.raises(IncompleteStreamError) as info:
        assemble(body, "openrouter-image")
    assert info.value.partial is not None and len(info.value.partial.items) == 4


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 120), max_size=20))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    data = (MEDIA / "image_two.sse").read_bytes()
    ref = StreamDecoder("openrouter-image", clock=lambda: 0)
    expected = ref.feed(data) + ref.close()
    dec = StreamDecoder("openrouter-image", clock=lambda: 0)
    got, pos = [], 0
    for size in cuts:
        got += dec.feed(data[pos:pos + size])
        pos += size
    assert got + dec.feed(data[pos:]) + dec.close() == expected


@pytest.mark.parametrize("frame", [
    b'{"type":"image_generation.completed","index":0,"b64_json":"%%%","media_type":"image/png"}',
    b'{"type":"image_generation.completed","index":0,"b64_json":5}',
    b'{"type":"image_generation.usage","usage":3}',
    b'"just a string"',
])
def test_hostile_frames_are_protocol_errors(frame: bytes) -> None:
    with pytest.raises(ProtocolError):
        assemble(b"data: " + frame + b"\n\ndata: [DONE]\n\n", "openrouter-image")


def test_unknown_frame_types_are_kept() -> None:
    body = b'data: {"type":"image_generation.progress","pct":50}\n\ndata: [DONE]\n\n'
    message = assemble(body, "openrouter-image")
    assert message.provider["unknown_events"] == [{"type": "image_generation.progress",
                                                   "pct": 50}]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(
    st.sampled_from(["type", "index", "b64_json", "media_type", "usage", "error"]),
    st.none() | st.integers() | st.text(max_size=8) | st.sampled_from([
        "image_generation.partial", "image_generation.completed", "image_generation.usage",
        "image_generation.error", "aGk=", {"code": "x", "status": 500}]),
    max_size=5), max_size=5))
def test_fuzzed_frames_raise_only_streamflow_errors(objs: list) -> None:
    body = b"".join(b"data: " + json.dumps(o).encode() + b"\n\n" for o in objs)
    try:
        assemble(body + b"data: [DONE]\n\n", "openrouter-image")
    except StreamflowError:
        pass


# -- speech ----------------------------------------------------------------------
AUDIO = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(range(256)) * 20


def test_speech_chunks_are_one_inline_data_group_with_the_content_type() -> None:
    dec = StreamDecoder("speech", mime_type="audio/wav")
    chunks = [AUDIO[i:i + 1000] for i in range(0, len(AUDIO), 1000)]
    events = [ev for c in chunks for ev in dec.feed(c)]
    assert len(events) == len(chunks)  # playable as the bytes arrive
    assert all(isinstance(ev.item, InlineDataItem) and ev.item.type == "inline_data.delta"
               and ev.item.mime_type == "audio/wav" for ev in events)
    done, stop = dec.close()
    assert isinstance(done.item, InlineDataItem) and done.item.data == AUDIO
    assert stop.finish_reason == "stop"
    assert stop.usage_metadata is not None and stop.usage_metadata.response_tokens is None


def test_speech_defaults_to_mpeg_and_an_empty_body_is_incomplete() -> None:
    message = assemble([AUDIO[:10], b"", AUDIO[10:]], "speech")
    assert message.items[0].mime_type == "audio/mpeg"  # type: ignore[union-attr]
    assert message.items[0].data == AUDIO  # type: ignore[union-attr]
    with pytest.raises(IncompleteStreamError):
        assemble(b"", "speech")


def test_speech_cannot_be_auto_detected() -> None:
    with pytest.raises(StreamflowError):
        assemble(AUDIO)
