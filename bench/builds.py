"""``python -m bench.builds``: the compiled and the pure-Python build side by side.

Both builds run the same workloads in their own interpreter (one process per build
and round, rounds interleaved: compiled, pure, compiled, pure...): the pure one is
the same checkout with ``STREAMFLOW_PURE=1``, which loads every module from its
``.py`` (docs/performance.md, "Compiled build"). Each process times the full typed pipeline, the
sans-IO StreamDecoder, ``assemble()``, the naive loop and the orjson parse floor on
the mixed workloads (optionally the SDK helpers), and the pipeline against the
naive loop on one tool argument of 10 KB / 100 KB / 1 MB; only ratios taken inside
one process are compared. Prints the median and the range over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

__all__ = ["main", "measure_this_build"]

PIPE, DEC, ASM = "pipeline", "decoder", "assemble"
NAIVE, FLOOR, SDK = "naive", "floor", "sdk"


def measure_this_build(quick: bool, reps: int, sdk: bool) -> dict[str, Any]:
    """Ratios of the build this interpreter runs (imports streamflow and the bench paths)."""
    import streamflow
    from streamflow import _build

    from . import anchors, paths
    from .measure import exponent, interleaved_times
    from .workloads import anthropic_growth, anthropic_mixed, chunked, openai_growth, openai_mixed

    seed = 2024
    mixed = ([anthropic_mixed(seed, 20, 50, 20, 600), openai_mixed(seed, 20, 50, 10, 300)]
             if quick else [anthropic_mixed(seed), openai_mixed(seed)])
    out: dict[str, Any] = {"build": _build.describe(), "compiled": streamflow.compiled,
                           "mixed": {}, "growth": {}}
    for w in mixed:
        chunks = chunked(w.body, seed)
        d = w.dialect
        fns: dict[str, Callable[[], Any]] = {
            PIPE: partial(paths.pipeline, chunks, d),
            DEC: partial(paths.decoder, chunks, d),
            ASM: partial(streamflow.assemble, chunks, d),
            NAIVE: partial(anchors.naive, chunks, d),
            FLOOR: partial(anchors.orjson_floor, w.payloads),
        }
        if sdk:
            fns[SDK] = partial(anchors.anthropic_sdk if d == "anthropic" else anchors.openai_sdk,
                               chunks, d)
        for fn in fns.values():
            fn()  # warm up: imports and first calls
        seconds, _ = interleaved_times(fns, dict.fromkeys(fns, reps), pick=min)
        out["mixed"][d] = seconds
    sizes = [1_000, 3_000, 10_000] if quick else [10_000, 100_000, 1_000_000]
    for d, make in (("anthropic", anthropic_growth), ("openai-chat", openai_growth)):
        times: list[float] = []
        ratio = 0.0
        for size in sizes:
            chunks = chunked(make(size).body, seed)
            fns = {PIPE: partial(paths.pipeline, chunks, d),
                   NAIVE: partial(anchors.naive, chunks, d)}
            seconds, _ = interleaved_times(fns, dict.fromkeys(fns, min(reps, 3)), pick=min)
            times.append(seconds[PIPE])
            ratio = seconds[PIPE] / seconds[NAIVE]
        mem = paths.peak_memory(chunked(make(sizes[-1]).body, seed), d)
        out["growth"][d] = {"vs_naive": ratio, "exponent": exponent(sizes, times),
                            "peak_vs_message": mem.peak / mem.message_python}
    return out


def _metrics(r: dict[str, Any]) -> dict[str, float]:
    """The compared figures of one run (speed ratios: higher is faster)."""
    out: dict[str, float] = {}
    for d, s in r["mixed"].items():
        out[f"{d}: pipeline speed vs naive loop"] = s[NAIVE] / s[PIPE]
        out[f"{d}: StreamDecoder speed vs naive loop"] = s[NAIVE] / s[DEC]
        out[f"{d}: assemble() speed vs naive loop"] = s[NAIVE] / s[ASM]
        out[f"{d}: pipeline time vs orjson floor"] = s[PIPE] / s[FLOOR]
        if SDK in s:
            out[f"{d}: pipeline speed vs SDK helper"] = s[SDK] / s[PIPE]
    for d, g in r["growth"].items():
        out[f"{d}: largest argument, pipeline time vs naive"] = g["vs_naive"]
        out[f"{d}: growth exponent"] = g["exponent"]
        out[f"{d}: largest argument, peak memory vs message"] = g["peak_vs_message"]
    return out


def _cell(values: list[float]) -> str:
    if not values:
        return "-"
    values = sorted(values)
    mid = values[len(values) // 2]
    return f"{mid:.2f}" if len(values) == 1 else f"{mid:.2f} ({values[0]:.2f}-{values[-1]:.2f})"


def _child(build: str, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("STREAMFLOW_PURE", None)
    if build == "pure":
        env["STREAMFLOW_PURE"] = "1"
    cmd = [sys.executable, "-m", "bench.builds", "--child", "--reps", str(args.reps)]
    cmd += ["--quick"] * args.quick + ["--sdk"] * args.sdk
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module doc)."""
    ap = argparse.ArgumentParser(prog="python -m bench.builds", description=__doc__)
    ap.add_argument("--rounds", type=int, default=3, help="processes per build (default 3)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per path and process")
    ap.add_argument("--quick", action="store_true", help="tiny workloads")
    ap.add_argument("--sdk", action="store_true", help="also time the official SDK helpers")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure_this_build(args.quick, args.reps, args.sdk)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"compiled": [], "pure": []}
    for _ in range(args.rounds):
        for build in runs:
            runs[build].append(_child(build, args))
    if not any(r["compiled"] for r in runs["compiled"]):
        print(f"note: the installed build is not compiled ({runs['compiled'][0]['build']}); "
              "both columns are pure Python. Build it: STREAMFLOW_COMPILE=1 pip install -e .\n")
    names = list(_metrics(runs["pure"][0]))
    cols = {b: [_metrics(r) for r in rs] for b, rs in runs.items()}
    from .report import machine, table

    rows = [[n, _cell([m[n] for m in cols["compiled"]]), _cell([m[n] for m in cols["pure"]])]
            for n in names]
    print(machine())
    print(f"median (range) over {args.rounds} processes per build, {args.reps} repetitions "
          "each\n")
    print(table(["figure", "compiled (mypyc)", "pure Python"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
