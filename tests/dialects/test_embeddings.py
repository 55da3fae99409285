"""OpenAI embeddings bodies -> embedding.delta + embedding.done per input, checked with the SDK."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import DATA

from streamflow import StreamDecoder, assemble
from streamflow.core.errors import (
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    StreamflowError,
)
from streamflow.core.events import EmbeddingItem
from streamflow.core.limits import Limits

EMB = DATA / "embeddings"


def sdk_vectors(body: bytes, encoding_format: str) -> list[list[float]]:
    """What the official ``openai`` client returns for this response body."""
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, content=body, headers={"content-type": "application/json"}))
    client = openai.OpenAI(api_key="test", base_url="http://127.0.0.1:9/v1",
                           http_client=httpx.Client(transport=transport))
    kwargs = {} if encoding_format == "base64" else {"encoding_format": encoding_format}
    result = client.embeddings.create(model="text-embedding-3-small", input=["a", "b", "c"],
                                      **kwargs)  # type: ignore[arg-type]
    return [d.embedding for d in sorted(result.data, key=lambda d: d.index)]


@pytest.mark.parametrize(("name", "fmt"), [("openai_float.json", "float"),
                                           ("openai_base64_pretty.json", "base64")])
def test_vectors_in_input_order_match_the_openai_sdk(name: str, fmt: str) -> None:
    body = (EMB / name).read_bytes()
    dec = StreamDecoder("openai-embeddings")
    events = dec.feed(body) + dec.close()
    kinds = [ev.item.type if ev.item else ev.event_type for ev in events]
    assert kinds == ["embedding.delta", "embedding.done"] * 3 + ["stop"]
    message = dec.message
    vectors = [i.embedding for i in message.items if isinstance(i, EmbeddingItem)]
    assert vectors == sdk_vectors(body, fmt)
    assert [i.provider["index"] for i in message.items] == [0, 1, 2]  # type: ignore[index]
    assert message.model == "text-embedding-3-small"
    assert message.finish_reason == "stop"
    usage = message.usage_metadata
    assert usage is not None and usage.prompt_tokens == 14
    assert events[0].item.embedding == events[1].item.embedding  # type: ignore[union-attr]


def test_compact_body_is_auto_detected() -> None:
    dec = StreamDecoder("auto")
    events = dec.feed((EMB / "openai_float.json").read_bytes())
    assert dec.dialect == "openai-embeddings"
    assert len(events + dec.close()) == 7


def test_error_body_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="maximum context length") as info:
        assemble((EMB / "openai_error.json").read_bytes(), "openai-embeddings")
    assert info.value.type == "invalid_request_error"
    assert info.value.code == "context_length_exceeded"


def test_cut_body_is_incomplete() -> None:
    body = (EMB / "openai_base64_pretty.json").read_bytes()
    with pytest.raises(IncompleteStreamError):
        assemble(body[: len(body) // 2], "openai-embeddings")
    with pytest.raises(IncompleteStreamError):
        assemble(b"", "openai-embeddings")


@pytest.mark.parametrize("body", [
    b'{"object":"list","data":[{"index":0,"embedding":["x"]}]}',
    b'{"object":"list","data":[{"index":0,"embedding":"AAA"}]}',
    b'{"object":"list","data":[{"index":"0","embedding":[1]}]}',
    b'{"object":"list","data":{}}',
    b'{"object":"list","data":[5]}',
    b"[1, 2]",
])
def test_hostile_bodies_are_protocol_errors(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        assemble(body, "openai-embeddings")


def test_body_size_is_limited() -> None:
    with pytest.raises(LimitExceededError) as info:
        assemble((EMB / "openai_base64_pretty.json").read_bytes(), "openai-embeddings",
                 limits=Limits(max_message_bytes=100))
    assert info.value.limit == "max_message_bytes"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 80), max_size=15))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    data = (EMB / "openai_base64_pretty.json").read_bytes()
    ref = StreamDecoder("openai-embeddings", clock=lambda: 0)
    expected = ref.feed(data) + ref.close()
    dec = StreamDecoder("openai-embeddings", clock=lambda: 0)
    got, pos = [], 0
    for size in cuts:
        got += dec.feed(data[pos:pos + size])
        pos += size
    assert got + dec.feed(data[pos:]) + dec.close() == expected


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.integers() | st.floats() | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.sampled_from(["object", "data", "index", "embedding", "usage",
                                         "error", "message"]), inner, max_size=4),
                    max_leaves=12))
def test_fuzzed_bodies_raise_only_streamflow_errors(value: object) -> None:
    try:
        assemble(json.dumps(value).encode(), "openai-embeddings")
    except StreamflowError:
        pass
