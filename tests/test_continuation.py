"""The continuation splice (sans-IO): several attempts give one answer.

A model oracle answers each continuation request with the rest of an intended answer,
read from the prefix the request carries (as a model continuing it would), so the
tests check what a user sees: the answer the consumers hold equals the intended one --
nothing duplicated, nothing missing, one stop -- whatever the cut, the chunking and
the number of attempts; and a consumer behind a Holdback never gets what is dropped.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow.core.continuation import (
    INSTRUCTION,
    MIN_OVERLAP,
    Continuation,
    Holdback,
    overlap,
)
from streamflow.core.delivery import DELIVERY, MAX_GAPS, Cadence
from streamflow.core.errors import IncompleteStreamError, StreamTimeoutError
from streamflow.core.events import (
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    item_to_dict,
)
from streamflow.core.message import Assembler, Message
from streamflow.core.outcome import StreamRestart
from streamflow.core.requests import ChatRequest, Thinking, Turn

# -- an answer as groups, and its events ------------------------------------------------


@dataclass
class Group:
    kind: str  # text | thinking | tool_call
    value: str  # the text, the thinking, or the call's JSON arguments
    name: str = ""
    call_id: str = ""


def split(value: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(value) + 1) for c in cuts} - {0, len(value)})
    bounds = [0, *points, len(value)]
    return [value[a:b] for a, b in itertools.pairwise(bounds)] or [""]


def group_events(group: Group, cuts: list[int]) -> list[UniEvent]:
    parts = split(group.value, cuts)
    if group.kind == "text":
        items: list[Any] = [TextItem("text.delta", p) for p in parts]
        done: Any = TextItem("text.done", group.value)
    elif group.kind == "thinking":
        items = [ThinkingItem("thinking.delta", p) for p in parts]
        items.append(ThinkingItem("thinking.delta", "", {"signature": "sig-" + group.value[:4]}))
        done = ThinkingItem("thinking.done", group.value, {"signature": "sig-" + group.value[:4]})
    else:
        items = [ToolCallItem("tool_call.delta", group.name if i == 0 else "",
                              group.call_id if i == 0 else "", p) for i, p in enumerate(parts)]
        import json
        done = ToolCallItem("tool_call.done", group.name, group.call_id, json.loads(group.value))
    return [UniEvent("delta", [i]) for i in [*items, done]]


def answer_events(groups: list[Group], cuts: list[int], usage: Usage | None = None,
                  reason: str = "stop") -> list[UniEvent]:
    out: list[UniEvent] = []
    for group in groups:
        out += group_events(group, cuts)
    out.append(UniEvent("stop", [], usage or Usage(prompt_tokens=10, response_tokens=5),
                        reason))  # type: ignore[arg-type]
    return out


def intended(groups: list[Group]) -> list[dict[str, Any]]:
    events = answer_events(groups, [])
    assembler = Assembler()
    for event in events:
        assembler.feed(event)
    return [item_to_dict(i) for i in assembler.message.items]


# -- the model oracle --------------------------------------------------------------------


@dataclass
class Oracle:
    """Answers a request with the rest of ``groups``, from the prefix it carries."""

    groups: list[Group]
    original: ChatRequest
    repeat: int = 0  # characters of the prefix's end an instructed answer repeats
    echo: bool = False  # the answer begins with the whole prefix as sent (llama.cpp)
    asked: list[ChatRequest] = field(default_factory=list)

    def rest(self, request: ChatRequest) -> list[Group]:
        self.asked.append(request)
        added = request.turns[len(self.original.turns):]
        if not added:
            return list(self.groups)
        kept = "".join(p.text for p in added[0].parts if isinstance(p, TextItem))
        prefilled = len(added) == 1
        if not prefilled:
            assert added[1].role == "user" and added[1].parts[0].text == INSTRUCTION  # type: ignore[union-attr]
        texts = [i for i, g in enumerate(self.groups) if g.kind == "text"]
        index = texts[0]
        text = self.groups[index].value
        assert text.startswith(kept), (text, kept)
        start = len(kept) - (0 if prefilled else min(self.repeat, len(kept)))
        rest = (kept if self.echo else "") + text[start:]
        out = [Group("text", rest)] if rest else []
        return out + [g for g in self.groups[index + 1:]]


class Reading:
    """What a decoder is to the splice: it assembles the attempt (``partial``)."""

    def __init__(self) -> None:
        self.assembler = Assembler()

    @property
    def partial(self) -> Message:
        return self.assembler.message


class Consumers:
    """A consumer that takes discards (as run()'s fan-out does), and one behind a Holdback."""

    def __init__(self) -> None:
        self.live = Assembler()
        self.notices: list[StreamRestart] = []
        self.held: list[Any] = []
        self.holdback = Holdback(self)
        self.events: list[UniEvent] = []

    def emit(self, value: Any) -> None:
        if isinstance(value, StreamRestart):
            self.notices.append(value)
            self.live.drop(value.groups or 0)
        else:
            self.live.feed(value)
            self.events.append(value)
        self.holdback.on_next(value)

    def on_next(self, value: Any) -> None:  # the Holdback's target
        self.held.append(value)

    def held_message(self) -> Message:
        assembler = Assembler()
        for value in self.held:
            if isinstance(value, UniEvent):
                assembler.feed(value)  # never anything it must take back
        return assembler.message


def drive(oracle: Oracle, cut_at: list[int], chunkings: list[list[int]], *, prefill: bool,
          error: Exception | None = None, end_at: int | None = None
          ) -> tuple[Continuation, Consumers]:
    """Attempt i gives the oracle's answer cut after ``cut_at[i]`` of its events; the
    last attempt goes to its stop (or, with ``end_at``, stops after that many events)."""
    consumers = Consumers()
    splice = Continuation(oracle.original, consumers.emit, clock=iter(range(10_000)).__next__)
    for attempt in range(len(cut_at) + 1):
        reading = Reading()
        splice.begin(f"e{attempt}", "anthropic", reading)
        request = splice.next_request(prefill)
        usage = Usage(prompt_tokens=10 + attempt, response_tokens=attempt + 1)
        events = answer_events(oracle.rest(request), chunkings[attempt % len(chunkings)], usage)
        last = attempt == len(cut_at)
        if not last:
            events = events[:cut_at[attempt] % len(events)]
        elif end_at is not None:
            events = events[:end_at]
        for event in events:
            reading.assembler.feed(event)
            splice.feed(event)
            splice.chunk_done()
        if not last:
            splice.cut(error or IncompleteStreamError("cut"), usage.so_far(),
                       attempt=attempt + 2, delay=0.0, endpoint=f"e{attempt + 1}")
    return splice, consumers


# -- examples --------------------------------------------------------------------------

ANSWER = [Group("thinking", "Let me look that up."),
          Group("text", "Paris is the capital of France. It lies on the Seine."),
          Group("tool_call", '{"city": "Paris"}', "weather", "call_1")]


def test_an_answer_without_a_cut_passes_as_it_came() -> None:
    oracle = Oracle(ANSWER, ChatRequest(turns=[Turn.user("Hi")]))
    splice, consumers = drive(oracle, [], [[3, 7]], prefill=True)
    assert [item_to_dict(i) for i in consumers.live.message.items] == intended(ANSWER)
    assert not consumers.notices
    stop = consumers.events[-1]
    assert stop.event_type == "stop" and stop.provider is not None
    delivery = stop.provider[DELIVERY]
    assert [a["outcome"] for a in delivery["attempts"]] == ["stop"]
    assert splice.partial.delivery == delivery
    assert oracle.asked[0].turns == oracle.original.turns


def test_a_cut_mid_text_is_continued_in_the_same_group() -> None:
    oracle = Oracle(ANSWER[:2], ChatRequest(turns=[Turn.user("Hi")]))
    # thinking (2 deltas + signature + done = 4 events) then 5 text fragments: cut in them
    _splice, consumers = drive(oracle, [7], [[5, 12, 20, 31]], prefill=True)
    message = consumers.live.message
    assert message.text == ANSWER[1].value
    assert [type(i).__name__ for i in message.items] == ["ThinkingItem", "TextItem"]
    assert consumers.notices[0].groups == 0 and consumers.notices[0].discard == 0
    prefix = oracle.asked[1].turns[-1]
    assert prefix.role == "assistant" and len(prefix.parts) == 1
    assert ANSWER[1].value.startswith(prefix.parts[0].text)  # type: ignore[union-attr]
    assert not prefix.parts[0].text.endswith(" ")  # type: ignore[union-attr]
    assert consumers.held_message().text == ANSWER[1].value
    assert sum(1 for e in consumers.events if e.event_type == "stop") == 1


def test_a_cut_in_a_tool_calls_arguments_drops_it_alone_and_the_next_attempt_makes_it_whole(
        ) -> None:
    oracle = Oracle(ANSWER, ChatRequest(turns=[Turn.user("Hi")]))
    events = answer_events(ANSWER, [2])
    in_call = next(i for i, e in enumerate(events)
                   if e.content_items and isinstance(e.content_items[0], ToolCallItem)) + 1
    _splice, consumers = drive(oracle, [in_call + 1], [[2]], prefill=True)
    notice = consumers.notices[0]
    assert notice.groups == 1 and notice.discard == 2  # the call's two fragments
    assert [item_to_dict(i) for i in consumers.live.message.items] == intended(ANSWER)
    assert [item_to_dict(i) for i in consumers.held_message().items] == intended(ANSWER)
    # the Holdback's consumer never saw the cut call's fragments
    calls = [v for v in consumers.held if isinstance(v, UniEvent) and v.content_items
             and isinstance(v.content_items[0], ToolCallItem)]
    assert len(calls) == 3 and calls[0].content_items[0].name == "weather"  # type: ignore[union-attr]


def test_every_call_goes_when_one_is_cut_after_another_was_whole() -> None:
    two = [ANSWER[1], Group("tool_call", '{"a": 1}', "f", "c1"),
           Group("tool_call", '{"b": 2}', "g", "c2")]
    oracle = Oracle(two, ChatRequest(turns=[Turn.user("Hi")]))
    events = answer_events(two, [3])
    second = next(i for i, e in enumerate(events) if e.content_items
              and isinstance(e.content_items[0], ToolCallItem)
              and e.content_items[0].name == "g")
    _splice, consumers = drive(oracle, [second + 1], [[3]], prefill=True)
    assert consumers.notices[0].groups == 2
    assert [c.tool_call_id for c in consumers.live.message.tool_calls] == ["c1", "c2"]
    assert [c.tool_call_id for c in consumers.held_message().tool_calls] == ["c1", "c2"]


def test_a_cut_in_signed_thinking_drops_it_and_asks_again_whole() -> None:
    oracle = Oracle(ANSWER, ChatRequest(turns=[Turn.user("Hi")]))
    _splice, consumers = drive(oracle, [2], [[4, 9]], prefill=False)
    assert consumers.notices[0].groups == 1 and consumers.notices[0].discard == 2
    assert oracle.asked[1].turns == oracle.original.turns  # nothing to go on from
    assert [item_to_dict(i) for i in consumers.live.message.items] == intended(ANSWER)
    thinking = consumers.live.message.items[0]
    assert isinstance(thinking, ThinkingItem) and thinking.fidelity == {"signature": "sig-Let "}


def test_thinking_whole_but_no_text_yet_is_dropped_too() -> None:
    oracle = Oracle(ANSWER, ChatRequest(turns=[Turn.user("Hi")]))
    _splice, consumers = drive(oracle, [3], [[]], prefill=True)  # the thinking block whole
    assert consumers.notices[0].groups == 1 and consumers.notices[0].discard == 3
    assert [type(i).__name__ for i in consumers.live.message.items] == \
        ["ThinkingItem", "TextItem", "ToolCallItem"]
    # the Holdback held the thinking until text came: its consumer saw it once
    thinking = [v for v in consumers.held if isinstance(v, UniEvent) and v.content_items
                and v.content_items[0].type == "thinking.done"]
    assert len(thinking) == 1


def test_a_server_that_echoes_the_prefill_before_going_on_is_not_repeated() -> None:
    """llama.cpp streams the prefilled text again, with its first new token, first."""
    oracle = Oracle(ANSWER[:2], ChatRequest(turns=[Turn.user("Hi")]), echo=True)
    _splice, consumers = drive(oracle, [8], [[40, 44, 50]], prefill=True)
    assert consumers.live.message.text == ANSWER[1].value
    assert consumers.held_message().text == ANSWER[1].value


def test_instruction_mode_sends_the_partial_then_asks_to_go_on_and_trims_a_repeat() -> None:
    request = ChatRequest(turns=[Turn.user("Hi")], thinking=Thinking(budget=1024))
    oracle = Oracle(ANSWER[:2], request, repeat=12)
    _splice, consumers = drive(oracle, [8], [[6, 14, 22]], prefill=True)  # thinking: no prefill
    added = oracle.asked[1].turns[len(request.turns):]
    assert [t.role for t in added] == ["assistant", "user"]
    assert isinstance(added[0].parts[0], ThinkingItem)  # signed thinking goes back
    assert consumers.live.message.text == ANSWER[1].value  # the 12 repeated chars trimmed


def test_usage_is_summed_and_each_attempt_is_recorded() -> None:
    oracle = Oracle(ANSWER[:2], ChatRequest(turns=[Turn.user("Hi")]))
    _splice, consumers = drive(oracle, [6, 3], [[5, 12, 20, 31, 40]], prefill=True,
                               error=StreamTimeoutError("idle", 5))
    message = consumers.live.message
    usage = message.usage
    assert usage is not None and usage.prompt_tokens == 10 + 11 + 12
    delivery = message.delivery
    assert delivery is not None
    assert [a["outcome"] for a in delivery["attempts"]] == ["cut", "cut", "stop"]
    assert [a["endpoint"] for a in delivery["attempts"]] == ["e0", "e1", "e2"]
    assert delivery["attempts"][0]["error"]["type"] == "StreamTimeoutError"
    assert delivery["stalls"] == 2
    assert delivery["ttft_s"] is not None and delivery["inter_chunk_p50_s"] is not None


def test_a_failure_the_chain_does_not_go_past_carries_the_answers_partial() -> None:
    oracle = Oracle(ANSWER[:2], ChatRequest(turns=[Turn.user("Hi")]))
    splice, consumers = drive(oracle, [7], [[9, 20]], prefill=True, end_at=2)
    attempt = Reading()
    attempt.assembler.feed(UniEvent("delta", [TextItem("text.delta", "xyz")]))
    failure = IncompleteStreamError("cut again", partial=attempt.partial)
    error = splice.fail(failure, None)
    assert error is failure and error.partial is not None
    assert error.partial.text == consumers.live.message.text  # the answer's, not the attempt's
    assert ANSWER[1].value.startswith(error.partial.text) and len(error.partial.text) > 9
    assert [a["outcome"] for a in error.partial.delivery["attempts"]] == \
        ["cut", "failed"]  # type: ignore[index]


def test_id_and_model_of_a_later_attempt_go_to_its_record_not_over_the_first() -> None:
    consumers = Consumers()
    splice = Continuation(ChatRequest(turns=[Turn.user("Hi")]), consumers.emit)
    first = Reading()
    splice.begin("a", "anthropic", first)
    opening = UniEvent("delta", [TextItem("text.delta", "Hello there")],
                       provider={"id": "msg_1", "model": "m1"})
    first.assembler.feed(opening)
    splice.feed(opening)
    splice.cut(IncompleteStreamError("cut"), None, attempt=2, delay=0.0, endpoint="b")
    splice.begin("b", "openai-chat", Reading())
    splice.next_request(True)
    splice.feed(UniEvent("delta", [TextItem("text.delta", ", friend")],
                         provider={"id": "gen_2", "model": "m2", "usage_so_far": {}}))
    splice.feed(UniEvent("delta", [TextItem("text.done", ", friend")]))
    splice.feed(UniEvent("stop", [], Usage(), "stop"))
    message = consumers.live.message
    assert message.text == "Hello there, friend"
    assert (message.id, message.model) == ("msg_1", "m1")
    records = message.delivery["attempts"]  # type: ignore[index]
    assert [(r["id"], r["model"]) for r in records] == [("msg_1", "m1"), ("gen_2", "m2")]


# -- properties ----------------------------------------------------------------------

words = st.text(st.sampled_from("abcdefgh ,.\n"), min_size=1, max_size=40)
answers = st.builds(
    lambda thinking, text, calls: ([Group("thinking", thinking)] if thinking else [])
    + [Group("text", text)]
    + [Group("tool_call", f'{{"n": {n}}}', f"tool{i}", f"call{i}") for i, n in enumerate(calls)],
    st.one_of(st.none(), words),
    words.filter(lambda t: bool(t.strip()) and not repeats_at_a_cut(t)),
    st.lists(st.integers(0, 999), max_size=2))


def repeats_at_a_cut(text: str) -> bool:
    """Whether ``text``, cut somewhere, goes on as the (trimmed) prefix again, or the
    prefix starts with all that follows it: what a prefilled continuation's first text
    reads as when a server echoes the prefix back before going on (llama.cpp), so it is
    trimmed as that echo -- the one case a prefill loses text."""
    for k in range(1, len(text)):
        kept, rest = text[:k].rstrip(), text[k:]
        n = min(len(kept), len(rest))
        if kept and kept[:n] == rest[:n]:
            return True
    return False


# Asked by instruction, a continuation's first characters are compared with the answer's
# end (a model asked to go on often repeats a few words): a text that repeats itself can
# look like such a repeat, so those answers are drawn with no character twice. Prefilled,
# a text that repeats itself whole at a cut reads as a server's echo (above): not drawn.
distinct = st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789 ,.\n"), min_size=1,
                    max_size=40, unique=True).map("".join).filter(lambda t: bool(t.strip()))


@settings(max_examples=300, deadline=None)
@given(answers, st.lists(st.integers(0, 60), max_size=3),
       st.lists(st.lists(st.integers(0, 50), max_size=6), min_size=1, max_size=3),
       st.booleans(), distinct, st.booleans())
def test_any_cuts_and_chunkings_give_the_intended_answer_once(
        groups: list[Group], cut_at: list[int], chunkings: list[list[int]],
        prefill: bool, plain: str, echo: bool) -> None:
    if not prefill or echo:  # see above
        groups = [Group("text", plain) if g.kind == "text" else g for g in groups]
    oracle = Oracle(groups, ChatRequest(turns=[Turn.user("Hi")]), echo=echo)
    splice, consumers = drive(oracle, cut_at, chunkings, prefill=prefill)
    want = intended(groups)
    assert [item_to_dict(i) for i in consumers.live.message.items] == want
    assert [item_to_dict(i) for i in splice.partial.items] == want
    assert [item_to_dict(i) for i in consumers.held_message().items] == want
    assert sum(1 for e in consumers.events if e.event_type == "stop") == 1
    assert consumers.events[-1].event_type == "stop"
    assert len(splice.partial.delivery["attempts"]) == len(cut_at) + 1  # type: ignore[index]


# -- pieces ----------------------------------------------------------------------------


@pytest.mark.parametrize(("tail", "head", "minimum", "expected"), [
    ("the cat sat on the ma", "mat.", 4, 0),  # "ma" repeats, but shorter than the minimum
    ("the cat sat on the ma", "the mat.", 4, 6),
    ("Hello,", " world", 4, 0),
    ("Hello, ", " world", 4, 1),  # whitespace only: always
    ("  ", "  x", 99, 2),
    ("abc", "xyz", 1, 0),
])
def test_overlap(tail: str, head: str, minimum: int, expected: int) -> None:
    assert overlap(tail, head, minimum) == expected
    assert MIN_OVERLAP == 4


def test_cadence_keeps_bounded_memory_and_its_quantiles() -> None:
    cadence = Cadence(0.0)
    now = 1.0
    for i in range(MAX_GAPS * 3):  # one gap in 50 is a stall of 0.5 s, the rest 10 ms
        cadence.content(now)
        now += 0.5 if i % 50 == 49 else 0.01
    assert len(cadence.gaps) <= MAX_GAPS  # a uniform sample
    assert cadence.ttft_s == 1.0
    assert cadence.gap_s(0.5) == pytest.approx(0.01)
    assert cadence.gap_s(0.99) == pytest.approx(0.5)
    assert cadence.to_dict() == {"ttft_s": 1.0, "inter_chunk_p50_s": 0.01,
                                 "inter_chunk_p99_s": 0.5}


def test_resume_and_drop_go_on_from_a_partial_message() -> None:
    assembler = Assembler()
    for event in answer_events(ANSWER, [3])[:-2]:  # the call's done and the stop left out
        assembler.feed(event)
    resumed = Assembler.resume(assembler.message)
    assert resumed.open_kind == "tool_call"
    resumed.drop(2)  # the open call and the text
    assert [type(i).__name__ for i in resumed.message.items] == ["ThinkingItem"]
    resumed.feed(UniEvent("stop", [], Usage(), "stop"))
    assert resumed.message.complete
    with pytest.raises(ValueError):
        resumed.drop(1)
