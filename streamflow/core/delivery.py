"""How an answer reached the user: its attempts, the time to its first token, the gaps
between its chunks (sans-IO).

A stream read through a failover chain (:mod:`streamflow.app.failover`) ends with a
stop event whose ``provider`` holds, under :data:`DELIVERY` (UniEvent's own key, as
``usage_so_far`` is), one JSON object::

    {"attempts": [{"endpoint": "primary", "dialect": "anthropic", "outcome": "cut",
                   "error": {"type": "IncompleteStreamError", "message": "..."},
                   "usage": {...} | null, "id": "msg_1", "model": "claude-...",
                   "events": 41, "delay_s": 0.0},
                  {"endpoint": "fallback", "outcome": "stop", ...}],
     "ttft_s": 0.41, "inter_chunk_p50_s": 0.021, "inter_chunk_p99_s": 0.19,
     "stalls": 1}

``attempts`` lists every request made for the answer, in order: where it went, how it
ended (``"stop"``, ``"cut"`` -- it failed after some output and the next attempt went
on from there --, or ``"failed"`` before any output), its error, its own usage and
the id and model its provider gave it. ``ttft_s`` counts from the start of the first
request to the first content fragment; the gaps are those between successive content
fragments as they were delivered (one gap spanning a failover included);
``stalls`` counts the attempts that ended by a timeout (first chunk or idle).
:attr:`Message.delivery <streamflow.core.message.Message.delivery>` reads it back.

:class:`Cadence` keeps the figures in bounded memory (a uniform sample of at most
:data:`MAX_GAPS` gaps), the one definition the failover chain and
:class:`~streamflow.reactive.sinks.stats.StreamStats` share.
"""

from __future__ import annotations

import random
from typing import Any, Final

from .events import JSONDict

__all__ = ["DELIVERY", "MAX_GAPS", "Cadence", "quantile"]

DELIVERY: Final = "delivery"
"""The key of the stop event's ``provider`` holding how the answer was delivered."""
MAX_GAPS: Final = 16384
"""The gaps a :class:`Cadence` keeps at most (then a uniform sample of them all)."""


def quantile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; ``None`` for none."""
    return _ranked(sorted(values), q)


def _ranked(ordered: list[float], q: float) -> float | None:
    """:func:`quantile` of values already sorted."""
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Cadence:
    """When content arrived: :meth:`content` once per content fragment, with the time.

    ``started`` is the time the answer was asked for (the clock is the caller's: the
    same for both). Memory is bounded: past :data:`MAX_GAPS` gaps the sample is a
    uniform random one of all the gaps so far (reservoir sampling, seeded: the same
    stream gives the same figures), so a stall that comes back every so often keeps
    its share of the sample.
    """

    __slots__ = ("started", "first", "last", "gaps", "_seen", "_random")

    def __init__(self, started: float) -> None:
        self.started = started
        self.first: float | None = None
        self.last: float | None = None
        self.gaps: list[float] = []
        self._seen = 0  # gaps seen, sampled or not
        self._random: random.Random | None = None

    def content(self, now: float) -> None:
        """A content fragment arrived at ``now``."""
        last = self.last
        self.last = now
        if last is None:
            self.first = now
            return
        self._seen += 1
        if self._seen <= MAX_GAPS:
            self.gaps.append(now - last)
        else:
            self._sample(now - last)

    def _sample(self, gap: float) -> None:
        """Past :data:`MAX_GAPS`: ``gap`` replaces a random one, with the chance that keeps
        the sample uniform."""
        if self._random is None:
            self._random = random.Random(MAX_GAPS)
        slot = self._random.randrange(self._seen)
        if slot < MAX_GAPS:
            self.gaps[slot] = gap

    @property
    def ttft_s(self) -> float | None:
        """Seconds from :attr:`started` to the first content fragment."""
        return None if self.first is None else max(0.0, self.first - self.started)

    def gap_s(self, q: float) -> float | None:
        """The ``q`` quantile of the gaps between content fragments (seconds)."""
        return quantile(self.gaps, q)

    def to_dict(self) -> JSONDict:
        """``{"ttft_s", "inter_chunk_p50_s", "inter_chunk_p99_s"}``, rounded to the µs."""
        out: dict[str, Any] = {}
        ordered = sorted(self.gaps)  # once for both
        for key, value in (("ttft_s", self.ttft_s),
                           ("inter_chunk_p50_s", _ranked(ordered, 0.5)),
                           ("inter_chunk_p99_s", _ranked(ordered, 0.99))):
            out[key] = None if value is None else round(value, 6)
        return out
