"""Test helpers: the items of an answer a failover chain continued, and a source of them.

Import as ``from continued_stream import ...`` (``tests/`` is on pytest's ``pythonpath``).

The streams are laid out as :class:`streamflow.core.continuation.Continuation` emits them
(``tests/test_fanout_continuing.py`` checks that it does): the first attempt's events,
one :class:`~streamflow.core.outcome.StreamRestart` with ``groups`` set, the next
attempt's events and the one stop, whose ``provider`` holds the
:data:`~streamflow.core.delivery.DELIVERY` record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from streamflow.core.delivery import DELIVERY
from streamflow.core.errors import StreamTimeoutError
from streamflow.core.events import ToolCallItem, UniEvent, Usage
from streamflow.core.outcome import StreamRestart
from streamflow.reactive._scope import current_scope
from streamflow.wire.dialects.base import Emitter

ERROR = StreamTimeoutError("idle", 2.0)
"""What cut the first attempt: a stall (an idle timeout)."""
CUT_ARGS = '{"city": "Pa'
"""The cut tool call's arguments: a fragment no consumer behind a Holdback may see."""
TEXT = "Let me check."
USAGE = Usage(prompt_tokens=30, response_tokens=12)


class Clock:
    """A clock the test sets: ``clock.now = t`` before the event that happens at ``t``."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def paced(clock: Clock, *, failover_s: float = 2.0, step: float = 0.25) -> Callable[[Any], None]:
    """A function that advances ``clock`` as each item goes out: ``step`` per event,
    ``failover_s`` for the wait before the next attempt (a continuation's notice)."""
    def tick(item: Any) -> None:
        clock.now += failover_s if isinstance(item, StreamRestart) else step
    return tick


def delivery(stalls: int = 1, attempts: int = 2) -> dict[str, Any]:
    """A stop's delivery record: ``attempts`` requests, the first ones cut by a stall."""
    records: list[dict[str, Any]] = [
        {"endpoint": "primary", "dialect": "anthropic", "outcome": "cut",
         "error": {"type": "StreamTimeoutError", "message": "idle timeout after 2s"},
         "usage": None, "id": "msg_1", "model": "primary-model", "events": 5, "delay_s": 0.0}
        for _ in range(attempts - 1)]
    records.append({"endpoint": "backup", "dialect": "openai-chat", "outcome": "stop",
                    "error": None, "usage": None, "id": "msg_2", "model": "backup-model",
                    "events": 4, "delay_s": 0.0})
    return {"attempts": records, "ttft_s": 0.1, "inter_chunk_p50_s": 0.05,
            "inter_chunk_p99_s": 0.5, "stalls": stalls}


def first_attempt(*, whole_call_first: bool = False) -> list[UniEvent]:
    """Text, (optionally a whole ``lookup`` call,) then ``get_weather`` cut in its arguments."""
    em = Emitter()
    em.note({"id": "msg_1", "model": "primary-model"})
    em.text("Let me ")
    em.text("check.")
    if whole_call_first:
        em.tool_call('{"q": "forecast"}', "lookup", "call_0", new=True)
    em.tool_call("", "get_weather", "call_1", new=True)
    em.tool_call(CUT_ARGS)
    return em.drain()  # no stop: the call stays open, as the stall left it


def second_attempt(*, whole_call_first: bool = False, stalls: int = 1) -> list[UniEvent]:
    """The calls again, whole, and the stop (its provider: the delivery record)."""
    em = Emitter()
    if whole_call_first:
        em.tool_call('{"q": "forecast"}', "lookup", "call_0", new=True)
    em.tool_call('{"city": ', "get_weather", "call_1", new=True)
    em.tool_call('"Paris"}')
    em.stop(USAGE, "tool_call", {DELIVERY: delivery(stalls)})
    return em.drain()


def continued_call(*, whole_call_first: bool = False) -> list[Any]:
    """A text group, a tool call cut in its arguments, the continuation's notice dropping
    the calls (``groups``: 1, or 2 with a whole call before the cut one), the calls again
    whole, the stop."""
    first = first_attempt(whole_call_first=whole_call_first)
    start = 3  # text.delta, text.delta, text.done: what stays
    dropped = first[start:]
    notice = StreamRestart(ERROR, 2, len(dropped), 0.0, groups=2 if whole_call_first else 1,
                           endpoint="backup")
    return [*first, notice, *second_attempt(whole_call_first=whole_call_first)]


def continued_text(*, endpoint: str | None = "backup") -> list[Any]:
    """Text cut mid-sentence, a continuation that drops nothing (``groups=0``), the rest
    of the sentence from the next attempt, the stop."""
    opening = UniEvent("delta", [_text("The answer is ")],
                       provider={"id": "msg_1", "model": "primary-model"})
    notice = StreamRestart(ERROR, 2, 0, 0.0, groups=0, endpoint=endpoint)
    return [opening, notice, UniEvent("delta", [_text("forty-two.")]),
            UniEvent("delta", [_text("The answer is forty-two.", done=True)]),
            UniEvent("stop", [], USAGE, "stop", 0,
                     {"id": "msg_1", "model": "primary-model", DELIVERY: delivery()})]


def _text(text: str, *, done: bool = False) -> Any:
    from streamflow.core.events import TextItem

    return TextItem("text.done" if done else "text.delta", text)


def events_only(items: list[Any]) -> list[UniEvent]:
    return [i for i in items if type(i) is UniEvent]


def fragments(items: list[Any]) -> list[str]:
    """Every tool call argument fragment among ``items``."""
    calls = [e.content_items[0] for e in events_only(items) if e.content_items]
    return [str(c.arguments) for c in calls if isinstance(c, ToolCallItem)]


class ContinuingSource(Observable[Any]):
    """A cold source of the items given, with ``continues = True`` as a failover chain's
    :class:`~streamflow.app.failover.FailoverSource` has: ``run()``/``stream()`` then put
    each sink that does not take discards behind a Holdback.

    Inside a scope (``run()``, ``stream()``) it pumps from a task of the scope, one item
    per checkpoint (``pause`` seconds after each notice: the backoff before an attempt);
    ``on_emit`` sees each item just before it goes out (a timeline of the test's).
    """

    continues = True

    def __init__(self, items: list[Any], *, pause: float = 0.0,
                 on_emit: Callable[[Any], None] | None = None) -> None:
        super().__init__()
        self.items = items
        self.pause = pause
        self.on_emit = on_emit
        self.subscriptions = 0

    def _subscribe_core(self, observer: abc.ObserverBase[Any],
                        scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        self.subscriptions += 1
        owner = current_scope()
        assert owner is not None, "ContinuingSource pumps in a scope (run(), stream())"

        async def pump(cancel: anyio.CancelScope) -> None:
            for item in self.items:
                if cancel.cancel_called:
                    return
                if self.on_emit is not None:
                    self.on_emit(item)
                observer.on_next(item)
                await anyio.lowlevel.checkpoint()
                if isinstance(item, StreamRestart) and self.pause:
                    await anyio.sleep(self.pause)
            owner.end(observer, None, cancel)

        return owner.spawn(pump, "test-pump:ContinuingSource") or Disposable()
