"""run()/stream() over a continuing source (``continues = True``, as a failover chain's):
a text group, a tool call cut in its arguments, the continuation's notice dropping it,
the call whole, the stop (asyncio, trio).

What a user notices: a sink of theirs (a callable, a BaseSink, an AsyncSink) and
``async for`` read one grammatical answer with nothing that was taken back; a sink that
takes discards reads everything live and the notice; the message has the call once; a
tool dispatcher, lazy or eager, runs each call once, with the whole arguments.
"""

from __future__ import annotations

from typing import Any

import pytest
from continued_stream import (
    CUT_ARGS,
    ERROR,
    ContinuingSource,
    continued_call,
    events_only,
    fragments,
    second_attempt,
)

import streamflow
from streamflow.app.tools import ToolRegistry
from streamflow.app.tools.dispatch import ToolDispatchSink
from streamflow.core.continuation import Continuation
from streamflow.core.errors import SinkError
from streamflow.core.events import ToolCallItem, UniEvent
from streamflow.core.message import Assembler, Message
from streamflow.core.outcome import StreamRestart
from streamflow.core.requests import ChatRequest, Turn
from streamflow.reactive.sinks.base import AsyncSink, BaseSink

pytestmark = pytest.mark.anyio
CALLS = pytest.mark.parametrize("whole_call_first", [False, True],
                                ids=["cut-call", "whole-call-then-cut-call"])


def assembled(items: list[Any]) -> Message:
    """The answer ``items`` spell, read by the grammar (a refused event raises)."""
    assembler = Assembler()
    for event in events_only(items):
        assembler.feed(event)
    return assembler.message


def kind(item: Any) -> str | None:
    """The kind of a delta event's group (``None`` for a stop or a notice)."""
    if type(item) is UniEvent and item.content_items:
        return item.content_items[0].kind
    return None


def names(message: Message) -> list[str]:
    return [call.name for call in message.tool_calls]


class Collector(BaseSink):
    """A user's BaseSink: every item it is given."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def on_event(self, event: UniEvent) -> None:
        self.items.append(event)

    def on_restart(self, notice: StreamRestart) -> None:
        self.items.append(notice)


class LiveCollector(Collector):
    takes_discards = True


class AsyncCollector(AsyncSink):
    def __init__(self) -> None:
        self.items: list[Any] = []
        self.ended: list[BaseException | None] = []

    async def on_event(self, event: Any) -> None:
        self.items.append(event)

    async def on_end(self, error: BaseException | None) -> None:
        self.ended.append(error)


class LiveAsyncCollector(AsyncCollector):
    takes_discards = True


# -- the test stream is the one a Continuation emits ---------------------------------------

class _Reading:
    """What assembles an attempt (a decoder's stand-in): its emitter's message."""

    def __init__(self, emitter: Any) -> None:
        self.emitter = emitter

    @property
    def partial(self) -> Message:
        return self.emitter.message


@CALLS
def test_the_test_stream_is_what_a_continuation_emits(whole_call_first: bool) -> None:
    from streamflow.wire.dialects.base import Emitter

    first_em, second_em = Emitter(), Emitter()
    first_em.note({"id": "msg_1", "model": "primary-model"})
    first_em.text("Let me ")
    first_em.text("check.")
    if whole_call_first:
        first_em.tool_call('{"q": "forecast"}', "lookup", "call_0", new=True)
    first_em.tool_call("", "get_weather", "call_1", new=True)
    first_em.tool_call(CUT_ARGS)
    out: list[Any] = []
    splice = Continuation(ChatRequest(turns=[Turn.user("Weather in Paris?")]), out.append,
                          clock=lambda: 0.0)
    splice.begin("primary", "anthropic", _Reading(first_em))
    for event in first_em.drain():
        splice.feed(event)
    splice.cut(ERROR, None, attempt=2, delay=0.0, endpoint="backup")
    splice.begin("backup", "openai-chat", _Reading(second_em))
    splice.next_request(prefill=True)
    for event in second_attempt(whole_call_first=whole_call_first):
        second_em.assembler.feed(event)  # what the decoder would have assembled
        splice.feed(event)
    ours = continued_call(whole_call_first=whole_call_first)
    (notice,) = [i for i in out if isinstance(i, StreamRestart)]
    (our_notice,) = [i for i in ours if isinstance(i, StreamRestart)]
    assert (notice.groups, notice.discard, notice.endpoint) == (
        our_notice.groups, our_notice.discard, our_notice.endpoint)
    assert out.index(notice) == ours.index(our_notice)
    assert [e.content_items for e in events_only(out)] == \
        [e.content_items for e in events_only(ours)]


# -- (a) a user's sink behind the hold-back ------------------------------------------------

@CALLS
async def test_a_users_plain_sinks_read_one_grammatical_answer_without_the_cut_call(
        whole_call_first: bool) -> None:
    items = continued_call(whole_call_first=whole_call_first)
    (notice,) = [i for i in items if isinstance(i, StreamRestart)]
    at = items.index(notice)
    dropped = {id(e) for e in items[at - notice.discard:at]}
    kept = [e for e in events_only(items) if id(e) not in dropped]
    seen: list[Any] = []
    base, later = Collector(), AsyncCollector()
    message = await streamflow.run(ContinuingSource(items), seen.append, base, later)
    assert later.ended == [None]
    for got in (seen, base.items, later.items):
        answer = assembled(got)  # the grammar takes it: no call interleaved or opened twice
        assert answer.items == message.items and answer.complete
        assert CUT_ARGS not in fragments(got)  # the taken-back fragment never came
        assert names(answer) == (["lookup", "get_weather"] if whole_call_first
                                 else ["get_weather"])
        # exactly the stream's events but the dropped ones, the same objects in order
        assert [id(e) for e in events_only(got)] == [id(e) for e in kept]


async def test_the_notice_still_reaches_a_plain_sink_after_the_text_and_before_the_call(
        ) -> None:
    """A sink counts the attempt; the notice comes where the answer went on."""
    seen: list[Any] = []
    await streamflow.run(ContinuingSource(continued_call()), seen.append)
    (at,) = [i for i, item in enumerate(seen) if isinstance(item, StreamRestart)]
    before, after = seen[:at], seen[at + 1:]
    assert [e.content_items[0].type for e in before] == ["text.delta", "text.delta",
                                                        "text.done"]
    assert isinstance(after[0].content_items[0], ToolCallItem)


async def test_the_text_before_the_cut_reaches_a_plain_sink_before_the_notice() -> None:
    """Text is not held: a user's UI shows it as it comes, not at the stop."""
    log: list[tuple[str, Any]] = []
    source = ContinuingSource(continued_call(), on_emit=lambda item: log.append(("emit", item)))
    await streamflow.run(source, lambda item: log.append(("sink", item)))
    text = [i for i, (who, item) in enumerate(log)
            if who == "sink" and kind(item) == "text"]
    emitted = [i for i, (who, item) in enumerate(log)
               if who == "emit" and kind(item) == "text"]
    assert len(text) == 3 and [t - e for t, e in zip(text, emitted, strict=True)] == [1, 1, 1]


async def test_a_failing_plain_sink_is_named_in_the_sink_error() -> None:
    def breaks(item: Any) -> None:
        if type(item) is UniEvent and item.event_type == "stop":
            raise RuntimeError("sink bug")

    with pytest.raises(SinkError) as caught:
        await streamflow.run(ContinuingSource(continued_call()), breaks)
    ((sink, error),) = caught.value.errors
    assert sink is breaks and str(error) == "sink bug"
    assert names(caught.value.partial) == ["get_weather"]  # type: ignore[arg-type]


async def test_a_sink_that_applies_the_notices_discard_keeps_the_answer() -> None:
    kept: list[Any] = []

    def contract(item: Any) -> None:
        if isinstance(item, StreamRestart):
            if item.whole:
                kept.clear()
            elif item.discard:
                del kept[-item.discard:]
        else:
            kept.append(item)

    message = await streamflow.run(ContinuingSource(continued_call()), contract)
    assert assembled(kept).items == message.items


# -- (b) a sink that takes discards ----------------------------------------------------------

@CALLS
async def test_a_sink_that_takes_discards_gets_every_item_live_and_the_notice(
        whole_call_first: bool) -> None:
    items = continued_call(whole_call_first=whole_call_first)
    log: list[tuple[str, Any]] = []
    live, live_async = LiveCollector(), LiveAsyncCollector()
    source = ContinuingSource(items, on_emit=lambda item: log.append(("emit", item)))
    await streamflow.run(source, live, live_async,
                         lambda item: log.append(("plain", item)))
    assert live.items == items and live_async.items == items  # the same objects, in order
    assert CUT_ARGS in fragments(live.items)
    # live: the plain sink's view lags behind at the cut call, the live sink's does not
    cut = next(i for i in items if CUT_ARGS in fragments([i]))
    assert ("plain", cut) not in log
    held = [i for i in items if kind(i) == "tool_call"]
    first_plain_call = next(n for n, (who, item) in enumerate(log)
                            if who == "plain" and item in held)
    assert log[first_plain_call - 1] == ("emit", items[-1])  # released at the stop


# -- (c) stream(): async for ---------------------------------------------------------------

@CALLS
async def test_async_for_yields_no_dropped_fragment(whole_call_first: bool) -> None:
    got: list[UniEvent] = []
    async with streamflow.stream(ContinuingSource(
            continued_call(whole_call_first=whole_call_first))) as s:
        async for event in s:
            got.append(event)
    assert all(type(e) is UniEvent for e in got)  # no notice in the iteration
    assert CUT_ARGS not in fragments(got)
    answer = assembled(got)
    assert answer.items == s.message.items and answer.complete
    assert s.message.text == "Let me check."
    assert len(s.message.tool_calls) == (2 if whole_call_first else 1)


async def test_text_stream_and_blocks_see_the_kept_answer_once() -> None:
    async with streamflow.stream(ContinuingSource(continued_call())) as s:
        texts = [t async for t in s.text_stream]
    assert "".join(texts) == "Let me check."
    async with streamflow.stream(ContinuingSource(continued_call())) as s:
        groups = [[item async for item in block] async for block in s.blocks()]
    assert len(groups) == 2  # the text and the call: no third group for the cut call
    call = groups[1][-1]
    assert isinstance(call, ToolCallItem) and call.arguments == {"city": "Paris"}


async def test_a_stream_sink_that_takes_discards_still_gets_the_notice() -> None:
    live = LiveCollector()
    async with streamflow.stream(ContinuingSource(continued_call()), sinks=[live]) as s:
        await s.final_message()
    assert any(isinstance(i, StreamRestart) for i in live.items)
    assert CUT_ARGS in fragments(live.items)


# -- (d) the message ---------------------------------------------------------------------

@CALLS
async def test_runs_message_has_each_call_once_with_its_whole_arguments(
        whole_call_first: bool) -> None:
    message = await streamflow.run(ContinuingSource(
        continued_call(whole_call_first=whole_call_first)))
    assert message.complete and message.finish_reason == "tool_call"
    assert message.text == "Let me check."
    calls = message.tool_calls
    assert [c.name for c in calls] == (["lookup", "get_weather"] if whole_call_first
                                       else ["get_weather"])
    assert calls[-1].arguments == {"city": "Paris"} and calls[-1].tool_call_id == "call_1"
    assert message.usage is not None and message.usage.response_tokens == 12
    delivery = message.delivery
    assert delivery is not None and len(delivery["attempts"]) == 2


async def test_a_continuing_source_is_subscribed_once() -> None:
    source = ContinuingSource(continued_call())
    await streamflow.run(source, lambda _: None, LiveCollector(), AsyncCollector())
    assert source.subscriptions == 1


# -- (e) tools run once ------------------------------------------------------------------

class Tools:
    """Two tools that count their runs and keep their arguments."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []

        def get_weather(city: str) -> str:
            """The weather of a city."""
            self.runs.append(("get_weather", {"city": city}))
            return f"sunny in {city}"

        def lookup(q: str) -> str:
            """Look something up."""
            self.runs.append(("lookup", {"q": q}))
            return "found"

        self.registry = ToolRegistry([get_weather, lookup])


@CALLS
async def test_a_lazy_dispatcher_runs_each_call_once(whole_call_first: bool) -> None:
    tools = Tools()
    dispatch = ToolDispatchSink(tools.registry)
    assert dispatch.takes_discards  # lazy: live, and it forgets what a notice drops
    await streamflow.run(ContinuingSource(continued_call(whole_call_first=whole_call_first)),
                         dispatch)
    expected = [("get_weather", {"city": "Paris"})]
    if whole_call_first:
        expected.insert(0, ("lookup", {"q": "forecast"}))
    assert sorted(tools.runs, key=str) == sorted(expected, key=str)
    assert [r.tool_call_id for r in dispatch.results] == (
        ["call_0", "call_1"] if whole_call_first else ["call_1"])
    assert all(not r.is_error for r in dispatch.results)


@CALLS
async def test_an_eager_dispatcher_runs_each_call_once(whole_call_first: bool) -> None:
    tools = Tools()
    async with ToolDispatchSink(tools.registry, eager=True) as dispatch:
        assert not dispatch.takes_discards  # eager: through the hold-back
        await streamflow.run(ContinuingSource(
            continued_call(whole_call_first=whole_call_first), pause=0.05), dispatch)
    expected = [("get_weather", {"city": "Paris"})]
    if whole_call_first:  # whole before the cut, dropped with it: must not run twice
        expected.insert(0, ("lookup", {"q": "forecast"}))
    assert sorted(tools.runs, key=str) == sorted(expected, key=str)
    assert len(dispatch.results) == len(expected)
    assert all(not r.is_error for r in dispatch.results)
