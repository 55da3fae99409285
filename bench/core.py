"""The core's own speed checks (issue 10, items 9 and 15), as ratios on the same bytes.

* *reactive vs sans-IO*: ``from_iterable(chunks).pipe(pipeline(d))`` subscribed with a
  plain observer, the way a user composes it, against ``assemble()`` on the same
  chunks -- target within 1.15x;
* *run_sync adds no second assembly*: ``run_sync`` handed that pipeline's UniEvents
  against the plain subscription (time per event) and against ``assemble()`` (the
  tracemalloc peak on the 1 MB tool argument) -- the pipeline lends ``run_sync`` its
  decoder, whose emitter already assembles the message;
* *tool-call arrivals are linear*: an openai-chat body where 2,000 new call indices
  arrive while call 0's arguments are still open, against the same calls sent in
  call order (same bytes give the same message) -- target within 2x.

Every path is run once untimed first (imports, caches), then timed interleaved
(:func:`bench.measure.interleaved_times`).
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import reactivex

from streamflow import Message, assemble
from streamflow.app.runtime import run_sync
from streamflow.reactive.operators import pipeline

from .measure import interleaved_times
from .workloads import anthropic_growth, anthropic_mixed, chunked, openai_mixed

__all__ = ["arrivals_bodies", "run_core"]

ASSEMBLE = "assemble()"
SUBSCRIBED = "pipeline() subscribed"
RUN_SYNC = "run_sync(pipeline())"


def _subscribed(chunks: list[bytes], dialect: str) -> int:
    count = 0

    def on_next(_: Any) -> None:
        nonlocal count
        count += 1

    reactivex.from_iterable(chunks).pipe(pipeline(dialect)).subscribe(on_next)
    return count


def _run_sync(chunks: list[bytes], dialect: str) -> Message:
    return run_sync(reactivex.from_iterable(chunks).pipe(pipeline(dialect)), lambda _: None)


def _peak(fn: Callable[[], Any]) -> int:
    fn()  # warm
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    obj = {"id": "c", "object": "chat.completion.chunk", "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def _call(index: int, args: str, first: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if first:
        out.update(id=f"call_{index}", type="function")
        out["function"]["name"] = "f"
    return out


def arrivals_bodies(arrivals: int, piece: int = 2000) -> tuple[bytes, bytes]:
    """(interleaved, in call order): the same calls; in the first, each new index arrives
    while call 0's arguments are still open."""
    head = _chunk({"tool_calls": [_call(0, '{"a": "', True)]})
    tail = _chunk({}, "tool_calls") + b"data: [DONE]\n\n"
    grow = [_chunk({"tool_calls": [_call(0, "y" * piece, False)]}) for _ in range(arrivals)]
    new = [_chunk({"tool_calls": [_call(i, "{}", True)]}) for i in range(1, arrivals + 1)]
    close0 = _chunk({"tool_calls": [_call(0, '"}', False)]})
    mixed = [head] + [c for pair in zip(grow, new, strict=True) for c in pair] + [close0]
    ordered = [head, *grow, close0, *new]
    return b"".join(mixed) + tail, b"".join(ordered) + tail


def run_core(reps: int, seed: int, quick: bool = False) -> dict[str, Any]:
    """Measure the three checks; returns ratios and the raw seconds."""
    out: dict[str, Any] = {}
    workloads = [anthropic_mixed(seed), openai_mixed(seed)] if not quick else [
        anthropic_mixed(seed, 20, 50, 20, 600), openai_mixed(seed, 20, 50, 10, 300)]
    for w in workloads:
        chunks = chunked(w.body, seed)
        d = w.dialect
        fns: dict[str, Callable[[], Any]] = {
            ASSEMBLE: lambda c=chunks, d=d: assemble(c, d),
            SUBSCRIBED: lambda c=chunks, d=d: _subscribed(c, d),
            RUN_SYNC: lambda c=chunks, d=d: _run_sync(c, d),
        }
        for fn in fns.values():
            fn()  # warm up every path before timing it
        seconds, _ = interleaved_times(fns, dict.fromkeys(fns, reps), pick=min)
        out[d] = {"seconds": seconds, "events": w.events,
                  "reactive_vs_assemble": seconds[SUBSCRIBED] / seconds[ASSEMBLE],
                  "run_sync_extra_us_per_event":
                      (seconds[RUN_SYNC] - seconds[SUBSCRIBED]) / w.events * 1e6}
    big = anthropic_growth(100_000 if quick else 1_000_000)
    chunks = chunked(big.body, seed)
    asm = _peak(lambda: assemble(chunks, "anthropic"))
    ran = _peak(lambda: _run_sync(chunks, "anthropic"))
    out["memory_1mb"] = {"assemble_peak": asm, "run_sync_peak": ran,
                         "run_sync_extra_mb": (ran - asm) / 1e6}
    interleaved, ordered = arrivals_bodies(200 if quick else 2000)
    fns = {"interleaved": lambda: assemble(interleaved, "openai-chat"),
           "call order": lambda: assemble(ordered, "openai-chat")}
    for fn in fns.values():
        fn()
    seconds, results = interleaved_times(fns, dict.fromkeys(fns, max(1, min(reps, 3))),
                                         pick=min)
    assert results["interleaved"].tool_calls == results["call order"].tool_calls
    out["arrivals"] = {"seconds": seconds, "bytes": len(interleaved),
                       "ratio": seconds["interleaved"] / seconds["call order"]}
    return out


def render_core(core: dict[str, Any]) -> tuple[str, list[tuple[str, str, bool]]]:
    """The printed table and the targets of the core checks."""
    rows, targets = [], []
    for d in ("anthropic", "openai-chat"):
        m = core[d]
        r = m["reactive_vs_assemble"]
        rows.append(f"| {d} | {r:.2f}x | {m['run_sync_extra_us_per_event']:+.2f} us |")
        targets.append((f"{d}: reactive pipeline within 1.15x of assemble()", f"{r:.2f}x",
                        r <= 1.15))
    mem = core["memory_1mb"]
    a = core["arrivals"]
    targets.append(("openai-chat: 2,000 index arrivals within 2x of call order",
                    f"{a['ratio']:.2f}x", a["ratio"] <= 2))
    text = ("## core checks (issue 10)\n\n| workload | pipeline() subscribed / assemble() | "
            "run_sync over the plain subscription, per event |\n|---|---|---|\n"
            + "\n".join(rows)
            + f"\n\n1 MB tool argument, tracemalloc peak: assemble() "
            f"{mem['assemble_peak'] / 1e6:.1f} MB, run_sync(pipeline()) "
            f"{mem['run_sync_peak'] / 1e6:.1f} MB ({mem['run_sync_extra_mb']:+.1f} MB)\n"
            f"tool-call index arrivals ({a['bytes'] / 1e6:.1f} MB): interleaved / call order "
            f"{a['ratio']:.2f}x")
    return text, targets
