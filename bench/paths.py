"""The streamflow paths under test, each reading the same chunk list as the anchors.

* :func:`pipeline` -- the full typed reactive pipeline a user writes: an observable
  of the chunks -> ``streamflow.reactive.operators.pipeline(dialect)`` -> ``run_sync`` with a
  sink that collects the ``.done`` items -> the assembled :class:`Message`;
* :func:`decoder` -- the sans-IO core alone: ``StreamDecoder.feed`` per chunk, then
  ``close()`` and ``.message``;
* :func:`over_httpx` -- the pipeline fed by ``from_httpx`` over ``httpx.MockTransport``
  (the same transport cost the SDK helpers pay);
* :func:`latency` -- per event, the wall time from pushing the chunk that completes it
  into the pipeline to the sink's ``on_next`` receiving it;
* :func:`peak_memory` -- tracemalloc peak of one pipeline run, and the final
  message's own size.
"""

from __future__ import annotations

import gc
import json
import sys
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

import reactivex
from reactivex import abc
from reactivex.disposable import Disposable

from streamflow import Message, StreamDecoder, UniEvent
from streamflow.app.runtime import run_sync
from streamflow.reactive.operators import pipeline as pipeline_op
from streamflow.reactive.sources import from_httpx, from_iterable

from .anchors import Outcome, mock_client

__all__ = ["Latency", "Memory", "decoder", "latency", "outcome", "over_httpx", "peak_memory",
           "pipeline"]


class DoneSink:
    """A sink keeping the ``.done`` items it receives (what a tool dispatcher would act on)."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done: list[Any] = []

    def __call__(self, event: UniEvent) -> None:
        items = event.content_items
        if items and items[0].type.endswith(".done"):
            self.done.append(items[0])


def pipeline(chunks: list[bytes], dialect: str) -> Message:
    """``from_iterable(chunks).pipe(pipeline(dialect))`` run with a ``.done`` sink."""
    sink = DoneSink()
    message = run_sync(from_iterable(chunks).pipe(pipeline_op(dialect)), sink)
    if len(sink.done) != len(message.items):
        raise AssertionError("the sink missed .done items")
    return message


def decoder(chunks: list[bytes], dialect: str) -> Message:
    """The sans-IO ``StreamDecoder`` alone."""
    dec = StreamDecoder(dialect)
    feed = dec.feed
    for chunk in chunks:
        feed(chunk)
    dec.close()
    return dec.message


def over_httpx(chunks: list[bytes], dialect: str) -> Message:
    """``from_httpx`` over ``httpx.MockTransport`` -> ``pipeline(dialect)`` -> ``run_sync``."""
    sink = DoneSink()
    with mock_client(chunks) as client:
        source = from_httpx(client, client.build_request("POST", "http://bench.invalid/"))
        return run_sync(source.pipe(pipeline_op(dialect)), sink)


def outcome(message: Message) -> Outcome:
    """The :class:`Outcome` of a streamflow message (to compare with the anchors)."""
    calls = [(c.tool_call_id, c.name, c.arguments) for c in message.tool_calls]
    return Outcome(message.text, message.thinking, calls)  # type: ignore[arg-type]


# -- latency ------------------------------------------------------------------------------

@dataclass(slots=True)
class Latency:
    """Added latency samples (ns), one per emitted event: wall clock and thread CPU time."""

    samples: list[int]
    cpu: list[int]

    def percentile(self, p: float, cpu: bool = False) -> float:
        """The ``p``-th percentile in microseconds (nearest rank)."""
        ordered = sorted(self.cpu if cpu else self.samples)
        rank = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))
        return ordered[rank] / 1000


def latency(chunks: list[bytes], dialect: str) -> Latency:
    """Per event: wall time from pushing its completing chunk to the sink's ``on_next``.

    The source records ``perf_counter_ns()`` (and the thread's CPU time) right before
    handing each chunk to the pipeline; the sink (behind ``run_sync``'s fan-out, like
    any sink) records the difference when an event reaches it. An event completed by
    a chunk is timed from that chunk's arrival, so the decoding of the events before
    it in the same chunk counts too. The CPU-time samples leave out the time this
    thread was not running (another process had the core).
    """
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    pushed = [0, 0]
    samples: list[int] = []
    cpu: list[int] = []

    def subscribe(observer: abc.ObserverBase[bytes], _: Any = None) -> abc.DisposableBase:
        for chunk in chunks:
            pushed[1] = cpu_clock()
            pushed[0] = clock()
            observer.on_next(chunk)
        observer.on_completed()
        return Disposable()

    def sink(event: UniEvent) -> None:
        now = clock()
        samples.append(now - pushed[0])
        cpu.append(cpu_clock() - pushed[1])

    source: reactivex.Observable[bytes] = reactivex.create(subscribe)
    run_sync(source.pipe(pipeline_op(dialect)), sink)
    return Latency(samples, cpu)


# -- memory -------------------------------------------------------------------------------

@dataclass(slots=True)
class Memory:
    """Peak traced memory of one pipeline run and the final message's sizes (bytes)."""

    peak: int
    message_python: int
    message_json: int


def deep_size(obj: Any, seen: set[int] | None = None) -> int:
    """``sys.getsizeof`` of ``obj`` and everything it references (dicts, lists, slots)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set)):
        size += sum(deep_size(v, seen) for v in obj)
    elif not isinstance(obj, (str, bytes)):
        # slotted classes; a mypyc-compiled dataclass has no __slots__, but its fields
        names = getattr(type(obj), "__slots__", None) or getattr(obj, "__dataclass_fields__", ())
        for name in names:
            if hasattr(obj, name):
                size += deep_size(getattr(obj, name), seen)
    return size


def peak_memory(chunks: list[bytes], dialect: str) -> Memory:
    """Tracemalloc peak of :func:`pipeline` over ``chunks`` (the chunks themselves excluded)."""
    pipeline(chunks, dialect)  # warm: imports and caches are not the stream's memory
    gc.collect()
    tracemalloc.start()
    try:
        message = pipeline(chunks, dialect)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    as_json = json.dumps(message.to_dict(), ensure_ascii=False).encode()
    return Memory(peak, deep_size(message), len(as_json))
