"""``python -m bench.structured``: structured output streamed, against instructor's ``Partial``.

One JSON answer of about 100 KB (a pydantic model with a list of 900 nested items),
cut into seeded fragments of 1–10 bytes (about 18,000), read by:

* *streamflow, read every event* — ``OutputParser.feed`` per fragment (as ``stream(...,
  output=T)`` does) and ``.snapshot`` read after every one: the worst case, a parse per
  event, as instructor always does;
* *streamflow, read per frame* — the snapshot read every 200 fragments (a UI drawing at
  its frame rate): the parse is lazy, so a fragment costs an append;
* *streamflow, feed only* — collecting and the strict final, nothing read while streaming
  (the cost on the hot path, linear in the size);
* *instructor Partial* — ``Partial[Model].model_from_chunks(fragments)``, which joins and
  re-parses the whole buffer for every fragment (skipped when ``instructor`` is not
  installed: ``pip install instructor``, in a venv of its own — it pins older SDKs);
* *floor* — one ``TypeAdapter.validate_json`` of the whole text.

Every path checks it ends with the same object. Times are CPU seconds (interleaved, min of
``--reps``); ratios are against instructor. ``--sizes`` adds the 10 KB and 1 MB answers and
prints the growth exponent of the feed-only path (1.0 is linear).
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

from pydantic import BaseModel, TypeAdapter

from streamflow.core.events import TextItem, UniEvent
from streamflow.core.message import Message
from streamflow.core.structured import OutputParser

from .measure import exponent, interleaved_times


class Reading(BaseModel):
    station: str
    hour: int
    temperature: float
    conditions: str
    tags: list[str]


class Report(BaseModel):
    city: str
    summary: str
    readings: list[Reading]


def answer(items: int, seed: int = 7) -> str:
    """A ``Report`` with ``items`` readings, as JSON (about 110 bytes a reading)."""
    rng = random.Random(seed)
    readings = [Reading(station=f"station-{i:04d} «{rng.choice('αβγδ')}»", hour=i % 24,
                        temperature=round(rng.uniform(-20, 40), 2),
                        conditions=rng.choice(["sunny", "partly cloudy", "rain", "snow"]),
                        tags=[rng.choice(["wind", "fog", "humid", "dry", "clear"])
                              for _ in range(rng.randint(1, 5))])
                for i in range(items)]
    return Report(city="Lisbon", summary="x" * 200, readings=readings).model_dump_json()


def fragments(text: str, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        step = rng.randint(1, 10)
        out.append(text[at:at + step])
        at += step
    return out


def _events(parts: list[str]) -> list[UniEvent]:
    return [UniEvent(event_type="delta", content_items=[TextItem(text=p)]) for p in parts]


def _streamflow(events: list[UniEvent], text: str, every: int) -> Any:
    parser = OutputParser(Report)
    for n, event in enumerate(events, 1):
        parser.feed(event)
        if every and n % every == 0:
            parser.snapshot  # noqa: B018 - reading is the work measured
    return parser.final(Message(items=[TextItem(type="text.done", text=text)]))


def _instructor(parts: list[str]) -> Any:
    from instructor.dsl.partial import Partial

    last = None
    for last in Partial[Report].model_from_chunks(parts):  # noqa: B007
        pass
    return Report.model_validate(last.model_dump())


def run(items: int, reps: int, with_instructor: bool) -> dict[str, float]:
    text = answer(items)
    parts = fragments(text)
    events = _events(parts)
    expected = Report.model_validate_json(text)
    floor = TypeAdapter(Report)
    paths = {
        "streamflow, read every event": lambda: _streamflow(events, text, 1),
        "streamflow, read per frame": lambda: _streamflow(events, text, 200),
        "streamflow, feed only": lambda: _streamflow(events, text, 0),
        "floor (one validate_json)": lambda: floor.validate_json(text),
    }
    if with_instructor:
        paths["instructor Partial"] = lambda: _instructor(parts)
    times, results = interleaved_times(paths, dict.fromkeys(paths, reps), pick=min)
    for name, result in results.items():
        assert result == expected, f"{name} read a different object"
    print(f"\n{len(text) / 1000:.0f} KB answer in {len(parts):,} fragments of 1-10 bytes")
    anchor = times.get("instructor Partial")
    for name, seconds in times.items():
        ratio = f"{anchor / seconds:8.1f}x instructor" if anchor else ""
        print(f"  {name:32s} {seconds * 1000:10.2f} ms  {ratio}")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.structured")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sizes", action="store_true", help="also 10 KB and 1 MB")
    args = parser.parse_args(argv)
    try:
        import instructor  # noqa: F401
        with_instructor = True
    except ModuleNotFoundError:
        print("instructor not installed: its column is skipped (pip install instructor)")
        with_instructor = False
    sizes = {"100 KB": 900}
    if args.sizes:
        sizes = {"10 KB": 90, "100 KB": 900, "1 MB": 9000}
    feed: dict[int, float] = {}
    for items in sizes.values():
        reps = 1 if items >= 9000 else args.reps
        times = run(items, reps, with_instructor and items <= 900)
        feed[len(answer(items))] = times["streamflow, feed only"]
    if len(feed) > 1:
        print(f"\nfeed-only growth exponent: {exponent(list(feed), list(feed.values())):.2f} "
              "(1.0 is linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
