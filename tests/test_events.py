"""UniEvent and its items: JSON forms (seed 001 field names), round trips, fragment joining."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow.core.events import (
    ITEM_CLASSES,
    EmbeddingItem,
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    event_from_dict,
    is_done,
    item_from_dict,
    item_to_dict,
    join_fragments,
    usage_from_dict,
    usage_to_dict,
)

SEED_DELTA = ('{"role": "assistant", "event_type": "delta", "content_items": [{"type": '
              '"text.delta", "text": "Hel"}], "usage_metadata": null, "finish_reason": null, '
              '"created_at": 1694502400000}')
SEED_STOP = ('{"role": "assistant", "event_type": "stop", "content_items": [], "usage_metadata": '
             '{"cached_tokens": 0, "prompt_tokens": 10, "thoughts_tokens": null, '
             '"response_tokens": 5}, "finish_reason": "stop", "created_at": 1694502400100}')


def roundtrip(event: UniEvent) -> UniEvent:
    return event_from_dict(json.loads(json.dumps(event.to_dict())))


def test_the_seed_examples_read_and_write_with_the_seed_field_names() -> None:
    for line in (SEED_DELTA, SEED_STOP):
        seed = json.loads(line)
        event = event_from_dict(seed)
        out = event.to_dict()
        for key in ("role", "event_type", "usage_metadata", "finish_reason", "created_at"):
            assert out[key] == seed[key]
        assert [{k: i[k] for k in s} for i, s in zip(out["content_items"], seed["content_items"],
                                                     strict=True)] == seed["content_items"]
    delta = event_from_dict(json.loads(SEED_DELTA))
    assert delta.item == TextItem("text.delta", "Hel") and delta.created_at == 1694502400000
    stop = event_from_dict(json.loads(SEED_STOP))
    assert stop.item is None
    assert stop.usage_metadata == Usage(cached_tokens=0, prompt_tokens=10, response_tokens=5)


ITEMS = [
    TextItem("text.done", "héllo 🙂", None, {"citations": [{"url": "u"}]}),
    ThinkingItem("thinking.delta", "", {"signature": "sig"}),
    ToolCallItem("tool_call.delta", "f", "t1", '{"a": '),
    ToolCallItem("tool_call.done", "f", "t1", {"a": [1, {"b": None}]}),
    InlineDataItem("inline_data.delta", b"\x00\xffRIFF", "audio/wav"),
    InlineThinkingItem("inline_thinking.done", b"opaque\x01", None, {"block_type": "r"}),
    EmbeddingItem("embedding.done", [0.5, -1.25, 3.0]),
]


@pytest.mark.parametrize("item", ITEMS, ids=lambda i: i.type)
def test_item_json_form_round_trips(item: Any) -> None:
    data = json.loads(json.dumps(item_to_dict(item)))
    assert data["type"] == item.type
    if isinstance(item, (InlineDataItem, InlineThinkingItem)):
        assert isinstance(data["data"], str)  # base64 text
    assert item_from_dict(data) == item


def test_usage_json_form() -> None:
    assert usage_to_dict(None) is None and usage_from_dict(None) is None
    plain = Usage(1, 2, 3, 4)
    assert usage_to_dict(plain) == {"cached_tokens": 1, "prompt_tokens": 2,
                                    "thoughts_tokens": 3, "response_tokens": 4}
    rich = Usage(None, 2, None, 4, cost=0.25, provider={"raw": 1})
    assert usage_to_dict(rich)["cost"] == 0.25  # type: ignore[index]
    assert usage_from_dict(usage_to_dict(rich)) == rich


@pytest.mark.parametrize(("data", "error"), [
    ({"event_type": "chunk"}, ValueError),
    ({"event_type": "stop", "finish_reason": "done"}, ValueError),
    ({"event_type": "delta", "content_items": [{"type": "audio.delta"}]}, KeyError),
    ({"event_type": "delta", "content_items": [{"type": "text.partial"}]}, ValueError),
    ({"event_type": "delta", "content_items": [{"text": "no type"}]}, KeyError),
    ({}, KeyError),
])
def test_event_from_dict_rejects_what_is_not_unievent(data: dict[str, Any],
                                                      error: type[Exception]) -> None:
    with pytest.raises(error):
        event_from_dict(data)


def test_join_fragments_for_each_growing_field() -> None:
    first = ThinkingItem("thinking.delta", "a", {"signature": "s"}, {"p": 1})
    assert join_fragments(first, ["a", "b", ""], done=True) == ThinkingItem(
        "thinking.done", "ab", {"signature": "s"}, {"p": 1})
    assert join_fragments(first, ["a", "b"], done=False).type == "thinking.delta"
    audio = InlineDataItem("inline_data.delta", b"\x01", "audio/pcm")
    assert join_fragments(audio, [b"\x01", b"\x02"], done=True) == InlineDataItem(
        "inline_data.done", b"\x01\x02", "audio/pcm")
    vec = EmbeddingItem("embedding.delta", [1.0])
    assert join_fragments(vec, [[1.0]], done=True).embedding == [1.0]  # type: ignore[union-attr]
    call = ToolCallItem("tool_call.delta", "f", "id", "{")
    assert join_fragments(call, ["{", "}"], done=True).arguments == "{}"  # type: ignore
    assert first.type == "thinking.delta" and first.thinking == "a"  # the first is not changed
    assert is_done(ITEMS[0]) and not is_done(ITEMS[1])


def test_every_kind_has_its_class_and_growing_field() -> None:
    assert set(ITEM_CLASSES) == {"text", "thinking", "tool_call", "inline_data",
                                 "inline_thinking", "embedding"}
    for kind, cls in ITEM_CLASSES.items():
        item = cls()
        assert item.type == f"{kind}.delta" and hasattr(item, cls.growing)


# -- any event survives the JSON round trip ----------------------------------------

JSONV = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=2)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=2), max_leaves=4)
SLOT = st.none() | st.dictionaries(st.text(max_size=4), JSONV, min_size=1, max_size=2)
PHASE = st.sampled_from(["delta", "done"])
ITEM = st.one_of(
    st.builds(lambda p, t, f, v: TextItem(f"text.{p}", t, f, v), PHASE, st.text(), SLOT, SLOT),
    st.builds(lambda p, t, f, v: ThinkingItem(f"thinking.{p}", t, f, v), PHASE, st.text(), SLOT,
              SLOT),
    st.builds(lambda n, i, a, f: ToolCallItem("tool_call.delta", n, i, a, f), st.text(max_size=5),
              st.text(max_size=5), st.text(), SLOT),
    st.builds(lambda n, a: ToolCallItem("tool_call.done", n, "id", a), st.text(max_size=5),
              st.dictionaries(st.text(max_size=4), JSONV, max_size=3)),
    st.builds(lambda p, d, m: InlineDataItem(f"inline_data.{p}", d, m), PHASE, st.binary(),
              st.sampled_from(["audio/wav", "image/png"])),
    st.builds(lambda p, d: InlineThinkingItem(f"inline_thinking.{p}", d), PHASE, st.binary()),
    st.builds(lambda p, e: EmbeddingItem(f"embedding.{p}", e), PHASE,
              st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=4)),
)
USAGE = st.builds(Usage, *[st.none() | st.integers(0, 10**9)] * 4,
                  cost=st.none() | st.floats(0, 10, allow_nan=False), provider=SLOT)
EVENT = st.one_of(
    st.builds(lambda i, t, p: UniEvent("delta", [i], None, None, t, p), ITEM,
              st.integers(0, 2**45), SLOT),
    st.builds(lambda u, f, t, p: UniEvent("stop", [], u, f, t, p), USAGE,
              st.sampled_from(["stop", "length", "tool_call", "unknown"]),
              st.integers(0, 2**45), SLOT),
)


@settings(max_examples=300, deadline=None)
@given(EVENT)
def test_any_event_round_trips_through_json(event: UniEvent) -> None:
    assert roundtrip(event) == event
