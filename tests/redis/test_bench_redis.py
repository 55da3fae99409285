"""``python -m bench.redis --quick`` runs and prints its figures (smoke test, no timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from parts import program

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_redis_bench_runs_quick() -> None:
    program("redis-server")
    done = subprocess.run([sys.executable, "-m", "bench.redis", "--quick"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "| streams | one event per | events | redis-py floor p50 ms" in done.stdout
    for row in ("| 1 | 5 ms | 20/20 |", "| 5 | 10 ms | 50/50 |", "aggregate, 5 streams",
                "the redis-py floor, same burst"):
        assert row in done.stdout  # every event arrived, at each stream count
