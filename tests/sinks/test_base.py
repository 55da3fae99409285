"""AsyncSink.on_event_nowait: items a sink takes at once skip the buffer and the consumer's
wake-up, and neither the order nor the failure rule changes (asyncio and trio)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import streamflow
from streamflow.reactive.sinks import AsyncSink, SinkError
from streamflow.reactive.sources import from_bytes

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
LONG = (DATA / "long_text.sse").read_bytes()
TURN = (DATA / "turn.sse").read_bytes()


class Picky(AsyncSink):
    """Takes every item it can at once, except each ``every``-th, which it awaits slowly."""

    def __init__(self, every: int | None = None, fail_at: int | None = None) -> None:
        self.every, self.fail_at = every, fail_at
        self.items: list[Any] = []
        self.how: list[str] = []
        self.ended: list[BaseException | None] = []
        self.offers = 0

    def on_event_nowait(self, event: Any) -> bool:
        self.offers += 1
        if self.fail_at is not None and len(self.items) == self.fail_at:
            raise ValueError("cannot take it")
        if self.every is not None and self.offers % self.every == 0:
            return False
        self.items.append(event)
        self.how.append("at once")
        return True

    async def on_event(self, event: Any) -> None:
        await anyio.sleep(0.002)
        self.items.append(event)
        self.how.append("awaited")

    async def on_end(self, error: BaseException | None) -> None:
        self.ended.append(error)


class Awaiting(AsyncSink):
    """The default: every item through the buffer."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def on_event(self, event: Any) -> None:
        self.items.append(event)


async def test_a_sink_that_takes_everything_at_once_never_waits_for_its_consumer() -> None:
    picky, plain = Picky(), Awaiting()
    await streamflow.run(from_bytes(LONG, chunk_size=64), picky, plain)
    assert picky.items == plain.items and len(picky.items) > 50
    assert set(picky.how) == {"at once"}
    assert picky.ended == [None]


async def test_items_taken_at_once_and_awaited_ones_keep_the_stream_order() -> None:
    picky, plain = Picky(every=3), Awaiting()
    await streamflow.run(from_bytes(LONG, chunk_size=64), picky, plain)
    assert picky.items == plain.items  # order intact across both paths
    assert {"at once", "awaited"} <= set(picky.how)
    # while an awaited item is buffered or being handled, later ones queue behind it:
    assert picky.offers < len(picky.items)


async def test_a_failure_to_take_one_at_once_fails_the_sink_like_on_event() -> None:
    picky, plain = Picky(fail_at=4), Awaiting()
    with pytest.raises(SinkError) as caught:
        await streamflow.run(from_bytes(TURN), picky, plain)
    [(sink, error)] = caught.value.errors
    assert sink is picky and isinstance(error, ValueError)
    assert len(picky.items) == 4 and isinstance(picky.ended[0], ValueError)
    assert len(plain.items) == 17  # the other sink and the stream went on
