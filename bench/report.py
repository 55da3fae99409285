"""Formatting of the results: the machine, markdown tables, target verdicts."""

from __future__ import annotations

import argparse
import os
import platform
from importlib import metadata

__all__ = ["machine", "table", "verdict"]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _version(name: str) -> str:
    try:
        return metadata.version("streamflow-llm" if name == "streamflow" else name)
    except metadata.PackageNotFoundError:
        return "-"


def machine() -> str:
    """One paragraph naming the machine and the versions measured."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    versions = ", ".join(f"{n} {_version(n)}" for n in (
        "streamflow", "pydantic-core", "reactivex", "anthropic", "openai", "httpx", "httpx2",
        "orjson"))
    from streamflow import _build

    return (f"machine: {os.cpu_count()} CPUs ({_cpu_model()}), Python "
            f"{platform.python_version()} ({platform.python_implementation()}), "
            f"load average {load:.1f} at start\n{versions}\n"
            f"streamflow build: {_build.describe()}")


def table(head: list[str], rows: list[list[str]]) -> str:
    """A markdown table, columns padded so it also reads well in a terminal."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), rule, *(line(r) for r in rows)])


def verdict(ok: bool) -> str:
    """``met`` or ``NOT met``."""
    return "met" if ok else "NOT met"


def rate(events: int, seconds: float) -> str:
    """Events per second, thousands-grouped."""
    return f"{events / seconds:,.0f}" if seconds > 0 else "-"


def times(value: float) -> str:
    """A ratio as ``12.3x``."""
    return f"{value:,.1f}x" if value >= 10 else f"{value:.2f}x"


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m bench``."""
    ap = argparse.ArgumentParser(prog="python -m bench",
                                 description="streamflow benchmarks (see bench/README.md)")
    ap.add_argument("--quick", action="store_true", help="tiny workloads, one repetition")
    ap.add_argument("--reps", type=int, help="repetitions per path (default 5; quick 1)")
    ap.add_argument("--sdk-reps", type=int, help="repetitions of the SDK helpers (default 3)")
    ap.add_argument("--no-sdk", action="store_true", help="skip the official SDK helpers")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of the pipeline")
    ap.add_argument("--seed", type=int, default=2024, help="workload and chunking seed")
    ap.add_argument("--json", metavar="PATH", help="also write the raw results as JSON")
    return ap
