"""The markdown tables ``python -m bench.servers`` prints (and the figures ``--json`` writes)."""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Sequence

from .levels import Level
from .matrix import Outcome, Settings

__all__ = ["header", "levels_table", "ratios_table", "sustained_table"]


def _ms(us: float | None) -> str:
    return "" if us is None or math.isnan(us) else f"{us / 1e3:.2f}"


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    return "\n".join([_row(head), _row(["---"] * len(head)), *map(_row, rows)])


def header(settings: Settings, facts: dict[str, object]) -> str:
    """The run's conditions: load average, build, event loops, the answer's shape."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    s = settings.shape
    lines = [f"load average: {load} · cores: {os.cpu_count()} · "
             f"python {platform.python_version()}",
             " · ".join(f"{k}: {v}" for k, v in facts.items()),
             f"answer: {s.events} events per stream, a chunk every {s.gap * 1e3:g} ms "
             f"holding {s.per_chunk} event(s), {s.size} B of text per event; "
             f"at least {settings.min_events} events per level"]
    return "\n\n".join(lines)


def levels_table(levels: Sequence[Level]) -> str:
    """One row per path and concurrency (paths in the order they first ran)."""
    order: dict[str, int] = {}
    for lv in levels:
        order.setdefault(lv.path, len(order))
    rows = [[lv.path, lv.concurrency, f"{lv.offered_per_s:.0f}", f"{lv.events_per_s:.0f}",
             _ms(lv.p50_us), _ms(lv.p99_us), _ms(lv.added_p50_us), _ms(lv.added_p99_us),
             f"{lv.cpu_per_event_us:.1f}",
             f"{lv.upstream_cpu_s * 1e6 / max(1, lv.received):.1f}",
             f"{lv.client_cores:.2f}" + (" (client-bound)" if lv.client_cores > 0.8 else ""),
             f"{lv.rss_per_stream / 1024:.1f}",
             f"{lv.received}/{lv.expected}" + (f", {lv.errors} failed" if lv.errors else "")]
            for lv in sorted(levels, key=lambda lv: (order[lv.path], lv.concurrency))]
    return _table(["path", "streams", "offered ev/s", "delivered ev/s", "p50 ms", "p99 ms",
                   "added p50 ms", "added p99 ms", "server CPU/event µs",
                   "upstream CPU/event µs", "client cores", "RSS/stream KB", "events"], rows)


def sustained_table(outcome: Outcome, budget_us: float) -> str:
    """Per through path: the highest concurrency at which added p99 stayed within budget."""
    rows = []
    for record in outcome.sustained.values():
        held, broke = record.held, record.broke
        rows.append([
            record.path, held.concurrency if held else "none",
            f"{held.events_per_s:.0f}" if held else "",
            f"{held.server_cpu_s / held.wall_s:.2f}" if held else "",
            "" if math.isnan(record.per_core) else f"{record.per_core:.0f}",
            "" if broke is None else f"{broke.concurrency} (added p99 {_ms(broke.added_p99_us)}"
            f" ms{', events lost' if broke.lost else ''})",
            "lower bound: the direct path was over budget" if record.limited_by_direct else ""])
    return (f"added p99 ≤ {budget_us / 1e3:g} ms, every event delivered\n\n"
            + _table(["path", "streams held", "ev/s there", "server cores",
                      "ev/s per core", "first level over", "note"], rows))


def ratios_table(levels: Sequence[Level]) -> str:
    """streamflow over LiteLLM on each shared route and concurrency (below 1: streamflow less)."""
    by_key = {(lv.path, lv.concurrency): lv for lv in levels}
    rows = []
    for (path, concurrency), ours in sorted(by_key.items()):
        if not path.startswith("streamflow "):
            continue
        theirs = by_key.get(("litellm " + path.split(" ", 1)[1], concurrency))
        if theirs is None:
            continue
        rows.append([path.split(" ", 1)[1], concurrency,
                     _ratio(ours.cpu_per_event_us, theirs.cpu_per_event_us),
                     _ratio(ours.added_p50_us, theirs.added_p50_us),
                     _ratio(ours.added_p99_us, theirs.added_p99_us)])
    return _table(["route", "streams", "CPU/event", "added p50", "added p99"], rows)


def _ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs <= 0 or math.isnan(ours) or math.isnan(theirs):
        return "n/a"
    return f"{ours / theirs:.2f}"
