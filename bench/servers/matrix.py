"""Every path at every concurrency, and the ramp to the load each path sustains.

The levels run in increasing concurrency; at each, the direct path of each upstream
dialect runs first, then every through path, so a load on the machine that comes and
goes hits all of them alike. A through path's added latency is its p50 / p99 minus
the direct path's at the same concurrency (same upstream dialect). A path *holds* a
level when every event arrived and its added p99 is at most ``--p99-budget`` (50 ms);
past the levels of the matrix (``--concurrency``) the ramp (``--ramp``) goes on only
with the paths still holding, and stops when none does or the direct path itself
exceeds the budget (then the upstream or the client is the limit, and the figures of
the paths still holding are lower bounds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .answer import Shape
from .levels import Level, Path, run_level

__all__ = ["Outcome", "Settings", "Sustained", "run_matrix"]


@dataclass
class Settings:
    """The knobs of a run (see ``python -m bench.servers --help``)."""

    shape: Shape = field(default_factory=Shape)
    concurrency: Sequence[int] = (1, 20, 100, 500)
    ramp: Sequence[int] = (50, 200, 300, 750, 1000)
    min_events: int = 1000
    client_procs: int = 1
    split_at: int = 500  # from this concurrency on, two client processes
    p99_budget_us: float = 50_000.0
    level_timeout: float = 120.0

    def procs(self, concurrency: int) -> int:
        """Client processes at ``concurrency``."""
        return max(self.client_procs, 2 if concurrency >= self.split_at else 1)

    def timeout(self, concurrency: int) -> float:
        """How long a level may take before its open streams count as failed."""
        streams = max(1, math.ceil(self.min_events / (concurrency * self.shape.events)))
        answer = streams * math.ceil(self.shape.events / self.shape.per_chunk) * self.shape.gap
        return min(self.level_timeout, max(60.0, 10 * answer))


@dataclass
class Sustained:
    """The highest level a path held, and the first it did not."""

    path: str
    held: Level | None = None
    broke: Level | None = None
    limited_by_direct: bool = False

    @property
    def per_core(self) -> float:
        """Events/s delivered at the level held, per core the server used there."""
        if self.held is None or not self.held.server_cpu_s:
            return math.nan
        cores = self.held.server_cpu_s / self.held.wall_s
        return self.held.events_per_s / max(cores, 1e-9)


@dataclass
class Outcome:
    """Every level measured, by path, and what each through path sustained."""

    levels: list[Level] = field(default_factory=list)
    sustained: dict[str, Sustained] = field(default_factory=dict)


def _direct_name(path: Path) -> str:
    return "direct " + ("chat" if path.route.upstream == "openai-chat" else "messages")


def run_matrix(direct: dict[str, Path], through: Sequence[Path], settings: Settings,
               say: Callable[[str], None] = print) -> Outcome:
    """Run the matrix and the ramp; ``direct`` maps ``"direct chat"``/``"direct messages"``
    to the upstream's own paths (only those the ``through`` paths need are run)."""
    outcome = Outcome(sustained={p.name: Sustained(p.name) for p in through})
    holding = {p.name for p in through}
    matrix = set(settings.concurrency)
    for concurrency in sorted(matrix | set(settings.ramp)):
        active = [p for p in through if concurrency in matrix or p.name in holding]
        if not active:
            break
        baselines: dict[str, Level] = {}
        for name in sorted({_direct_name(p) for p in active}):
            baselines[name] = _run(direct[name], concurrency, settings, say)
            outcome.levels.append(baselines[name])
        saturated = any(b.p99_us > settings.p99_budget_us or b.lost
                        for b in baselines.values())
        for path in active:
            level = _run(path, concurrency, settings, say)
            base = baselines[_direct_name(path)]
            level.added_p50_us, level.added_p99_us = (level.p50_us - base.p50_us,
                                                      level.p99_us - base.p99_us)
            outcome.levels.append(level)
            if path.name not in holding:
                continue
            record = outcome.sustained[path.name]
            if level.lost == 0 and level.added_p99_us <= settings.p99_budget_us:
                record.held = level
                record.limited_by_direct = saturated
            else:
                record.broke = level
                holding.discard(path.name)
        if saturated and concurrency not in matrix:
            say(f"  ramp stopped at {concurrency}: the direct path itself is over budget")
            break
    return outcome


def _run(path: Path, concurrency: int, settings: Settings, say: Callable[[str], None]) -> Level:
    level = run_level(path, concurrency, settings.shape, min_events=settings.min_events,
                      client_procs=settings.procs(concurrency),
                      timeout=settings.timeout(concurrency))
    added = "" if level.added_p99_us is None else f" added p99 {level.added_p99_us / 1e3:.1f} ms"
    say(f"  {path.name:28} x{concurrency:<5} p50 {level.p50_us / 1e3:8.2f} ms  "
        f"p99 {level.p99_us / 1e3:8.2f} ms  {level.cpu_per_event_us:7.0f} us CPU/event  "
        f"{level.received}/{level.expected} events{added}")
    return level

