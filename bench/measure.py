"""Timing helpers: interleaved repetitions, the log-log growth exponent, a profile.

Times are CPU seconds of the benchmarking process (``time.process_time``): every path
here runs synchronously in this thread (the SDK clients too, over ``MockTransport``),
so CPU time is the work done, and another process loading the machine inflates no
path more than another. Repetitions are interleaved (path A, B, C, A, B, C...), so a
slow patch of the machine spreads over all paths instead of landing on one.
"""

from __future__ import annotations

import cProfile
import gc
import io
import math
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["exponent", "interleaved_times", "profile_top", "timed"]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """CPU seconds of one call of ``fn`` (after a full collection), and its result."""
    gc.collect()
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def interleaved_times(paths: dict[str, Callable[[], Any]], reps: dict[str, int],
                      pick: Callable[[list[float]], float] = statistics.median,
                      ) -> tuple[dict[str, float], dict[str, Any]]:
    """Each path's CPU time over its ``reps`` runs, repetitions interleaved: ``pick`` of
    them (the median by default; ``min`` for the main bench, as ``timeit`` takes it).

    Returns the picked times and each path's last result (for the caller to check).
    """
    times: dict[str, list[float]] = {name: [] for name in paths}
    results: dict[str, Any] = {}
    for round_ in range(max(reps.values())):
        for name, fn in paths.items():
            if round_ < reps[name]:
                seconds, results[name] = timed(fn)
                times[name].append(seconds)
    return {name: pick(values) for name, values in times.items()}, results


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The least-squares slope of log(time) on log(size): 1.0 is linear, 2.0 quadratic."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    den = sum((x - mx) ** 2 for x in xs)
    return num / den if den else float("nan")


def profile_top(fn: Callable[[], Any], count: int = 14) -> str:
    """cProfile of one call of ``fn``: the ``count`` functions with the most own time."""
    fn()
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(count)
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return "\n".join(_short(line) for line in lines[start:] if line.strip())


def _short(line: str) -> str:
    """A pstats line with site-packages and repository prefixes cut."""
    for marker in ("site-packages/", "/work/main/"):
        if marker in line:
            head, _, tail = line.partition(marker)
            head = head[: head.rfind(" ") + 1] if " " in head else ""
            line = head + tail
    return line
