"""Emitter (the grammar every dialect writes through) and the Decoder base contract."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from streamflow.core.errors import (
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    ToolCallArgumentParseError,
)
from streamflow.core.events import (
    EmbeddingItem,
    InlineDataItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
)
from streamflow.core.limits import Limits
from streamflow.wire.dialects._readers import expect_str
from streamflow.wire.dialects.base import Decoder, Emitter, load_json, merge_provider
from streamflow.wire.framing import ServerSentEvent


def items(events: list[UniEvent]) -> list[Any]:
    return [e.item for e in events if e.event_type == "delta"]


def test_a_fragment_of_another_kind_closes_the_open_group() -> None:
    em = Emitter()
    em.thinking("a")
    em.thinking("b")
    em.text("x")
    em.text("y")
    em.tool_call('{"q": 1}', "search", "c1")
    em.stop(Usage(response_tokens=3), "tool_call")
    assert items(em.drain()) == [
        ThinkingItem("thinking.delta", "a"), ThinkingItem("thinking.delta", "b"),
        ThinkingItem("thinking.done", "ab"),
        TextItem("text.delta", "x"), TextItem("text.delta", "y"), TextItem("text.done", "xy"),
        ToolCallItem("tool_call.delta", "search", "c1", '{"q": 1}'),
        ToolCallItem("tool_call.done", "search", "c1", {"q": 1}),
    ]


def test_new_starts_another_call_and_name_and_id_stay_on_the_first_fragment() -> None:
    em = Emitter()
    em.tool_call("", "f", "a", new=True)
    em.tool_call('{"x":')
    em.tool_call(" 1}")
    em.tool_call('{"y": 2}', "g", "b", new=True)
    em.stop(None, "tool_call")
    out = em.drain()
    assert items(out) == [
        ToolCallItem("tool_call.delta", "f", "a", ""),
        ToolCallItem("tool_call.delta", "", "", '{"x":'),
        ToolCallItem("tool_call.delta", "", "", " 1}"),
        ToolCallItem("tool_call.done", "f", "a", {"x": 1}),
        ToolCallItem("tool_call.delta", "g", "b", '{"y": 2}'),
        ToolCallItem("tool_call.done", "g", "b", {"y": 2}),
    ]
    assert out[-1].usage_metadata == Usage()  # stop always carries a usage object


def test_done_carries_the_fidelity_and_merged_provider_of_its_fragments() -> None:
    em = Emitter()
    em.thinking("t", None, {"tags": ["a"], "n": 1})
    em.thinking("", {"signature": "sig"}, {"tags": ["b"], "n": 2})
    em.close_group()
    em.close_group()  # nothing open: no-op
    done = items(em.drain())[-1]
    assert done == ThinkingItem("thinking.done", "t", {"signature": "sig"},
                                {"tags": ["a", "b"], "n": 2})
    assert merge_provider(None, None) is None
    assert merge_provider({"a": [1]}, {"a": [2], "b": 3}) == {"a": [1, 2], "b": 3}


def test_bad_arguments_raise_in_place_of_the_done_and_the_partial_keeps_the_call() -> None:
    em = Emitter()
    em.text("hi")
    em.tool_call('{"a": ', "f", "c9")
    with pytest.raises(ToolCallArgumentParseError) as info:
        em.stop(Usage(), "tool_call")
    assert info.value.arguments == '{"a": ' and info.value.tool_call_id == "c9"
    out = em.drain()
    assert [i.type for i in items(out)] == ["text.delta", "text.done", "tool_call.delta"]
    assert all(e.event_type == "delta" for e in out)  # no stop after the error
    partial = em.message
    assert not partial.complete and partial.items == [
        TextItem("text.done", "hi"), ToolCallItem("tool_call.delta", "f", "c9", '{"a": ')]


def test_stop_is_last_and_once() -> None:
    em = Emitter()
    em.note({"id": "m1", "model": "x", "other": 1})
    em.now = 42
    em.text("a")
    em.stop(Usage(1, 2, 3, 4), "stop", {"stop_reason": "end_turn"})
    out = em.drain()
    assert out[0].provider == {"id": "m1", "model": "x"}  # first delta only
    assert out[1].provider is None
    assert out[-1] == UniEvent("stop", [], Usage(1, 2, 3, 4), "stop", 42,
                               {"id": "m1", "model": "x", "other": 1, "stop_reason": "end_turn"})
    assert em.drain() == []
    with pytest.raises(ProtocolError):
        em.stop(Usage(), "stop")
    with pytest.raises(ProtocolError):
        em.text("late")
    m = em.message
    assert m.complete and m.text == "a" and m.id == "m1" and m.created_at == 42


def test_partial_message_is_done_items_plus_the_open_group_as_one_delta() -> None:
    em = Emitter()
    em.thinking("hm")
    em.text("Hel")
    em.text("lo")
    m = em.message
    assert m.items == [ThinkingItem("thinking.done", "hm"), TextItem("text.delta", "Hello")]
    assert not m.complete and m.usage_metadata is None and m.finish_reason is None


# -- limits: named, raised before the offending fragment lands ------------------------

def test_max_groups() -> None:
    em = Emitter(Limits(max_groups=2))
    em.text("a")
    em.thinking("b")
    with pytest.raises(LimitExceededError) as info:
        em.text("c")
    assert info.value.limit == "max_groups" and info.value.maximum == 2
    assert em.message.items == [TextItem("text.done", "a"), ThinkingItem("thinking.done", "b")]


def test_max_message_bytes() -> None:
    em = Emitter(Limits(max_message_bytes=10))
    em.text("12345")
    em.thinking("678")
    with pytest.raises(LimitExceededError) as info:
        em.thinking("9ab")
    assert info.value.limit == "max_message_bytes"
    assert em.message.items == [TextItem("text.done", "12345"),
                                ThinkingItem("thinking.delta", "678")]


def test_max_tool_arguments_bytes_is_per_call() -> None:
    em = Emitter(Limits(max_tool_arguments_bytes=8))
    em.tool_call('{"a":1}', "f", "1")
    em.tool_call('{"b":2}', "f", "2", new=True)  # a new call starts counting again
    with pytest.raises(LimitExceededError) as info:
        em.tool_call("  ")
    assert info.value.limit == "max_tool_arguments_bytes"
    assert em.message.items == [ToolCallItem("tool_call.done", "f", "1", {"a": 1}),
                                ToolCallItem("tool_call.delta", "f", "2", '{"b":2}')]


def test_binary_and_vectors_count_towards_the_message_size() -> None:
    em = Emitter(Limits(max_message_bytes=20))
    em.delta(InlineDataItem("inline_data.delta", b"x" * 10, "audio/pcm"))
    with pytest.raises(LimitExceededError):
        em.delta(EmbeddingItem("embedding.delta", [0.0, 1.0]))  # 16 bytes of floats


# -- the Decoder base contract ----------------------------------------------------------

class LineDecoder(Decoder[ServerSentEvent]):
    """A toy dialect: ``t:<text>``, ``stop``, ``bad`` (a bug: KeyError), ``err`` (provider),
    ``json`` (malformed JSON: the typed error bad input gives)."""

    name: ClassVar[str] = "toy"

    def handle(self, frame: ServerSentEvent) -> None:
        data = frame.data
        if data.startswith("t:"):
            self.emitter.text(data[2:])
        elif data == "stop":
            self.emitter.stop(Usage(), "stop")
        elif data == "bad":
            _ = {}["missing"]
        elif data == "err":
            raise ProviderError("boom", type="api_error")
        elif data == "json":
            load_json("{not json", "toy event")

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        return True


def test_decoder_feeds_and_closes() -> None:
    d = LineDecoder(clock=lambda: 7)
    assert d.feed(ServerSentEvent("t:a")) == [UniEvent("delta", [TextItem("text.delta", "a")],
                                                       None, None, 7)]
    assert [e.event_type for e in d.feed(ServerSentEvent("stop"))] == ["delta", "stop"]
    assert d.close() == [] and d.stopped and d.partial.text == "a"


@pytest.mark.parametrize(("frame", "error"), [("json", ProtocolError), ("err", ProviderError)])
def test_decoder_errors_are_typed_and_carry_the_partial(frame: str, error: type) -> None:
    d = LineDecoder()
    d.feed(ServerSentEvent("t:kept"))
    with pytest.raises(error) as info:
        d.feed(ServerSentEvent(frame))
    assert type(info.value) is error and info.value.partial.text == "kept"
    if error is ProtocolError:
        assert info.value.raw == "{not json"


def test_a_bug_in_a_decoder_propagates_as_itself() -> None:
    """h11's contract: bad input gives streamflow errors; our own bug is not disguised."""
    d = LineDecoder()
    with pytest.raises(KeyError):
        d.feed(ServerSentEvent("bad"))


def test_decoder_close_without_stop_is_incomplete() -> None:
    d = LineDecoder()
    d.feed(ServerSentEvent("t:half"))
    with pytest.raises(IncompleteStreamError) as info:
        d.close()
    assert info.value.partial is not None and info.value.partial.items == [
        TextItem("text.delta", "half")]


def test_json_and_string_helpers() -> None:
    assert load_json('{"a": [1]}') == {"a": [1]}
    with pytest.raises(ProtocolError) as info:
        load_json("{nope", "frame")
    assert info.value.raw == "{nope" and "frame" in info.value.message
    assert expect_str("x", "f") == "x" and expect_str(None, "f") == ""
    for bad in (1, 1.5, True, [], {}):
        with pytest.raises(ProtocolError):
            expect_str(bad, "field")
