"""``python -m bench.servers``: the gateway and LiteLLM's proxy against the direct path, one run.

Starts, each in its own process: the loopback upstream (``upstream.py``), one
``streamflow gateway`` per upstream dialect the routes need, and LiteLLM's proxy
(skipped, with a note, when no interpreter has ``litellm[proxy]``); then runs the
matrix and the ramp (``matrix.py``) and prints markdown tables: every path at every
concurrency, what each through path sustained, streamflow over LiteLLM. With
``--open-streams N`` it holds N slow streams open through each server instead.
See bench/README.md ("Servers") for how to read the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path as FilePath
from typing import Any

import httpx

import streamflow

from .answer import ROUTES, Shape
from .levels import Path
from .matrix import Settings, run_matrix
from .openstreams import OpenStreams, open_streams, open_streams_table
from .procs import Server, free_port, python_module, raise_nofile
from .proxies import floor, gateway, litellm, litellm_python, uses_uvloop
from .report import header, levels_table, ratios_table, sustained_table

__all__ = ["main"]


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.servers", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    a = p.add_argument
    a("--events", type=int, default=200, help="events per stream (default 200)")
    a("--gap", type=float, default=0.005, help="seconds between chunks (default 0.005)")
    a("--size", type=int, default=32, help="bytes of text per event (default 32)")
    a("--per-chunk", type=int, default=1, help="events coalesced in one chunk (default 1)")
    a("--concurrency", type=_ints, default=[1, 20, 100, 500],
      help="the matrix's concurrent streams (default 1,20,100,500)")
    a("--ramp", type=_ints, default=[50, 200, 300, 750, 1000],
      help="further levels the ramp tries, past the matrix (default 50,200,300,750,1000)")
    a("--min-events", type=int, default=1000, help="events per level at least (default 1000)")
    a("--client-procs", type=int, default=1, help="client processes (default 1)")
    a("--split-at", type=int, default=500,
      help="from this concurrency on, 2 client processes at least (default 500)")
    a("--p99-budget-ms", type=float, default=50.0, help="added p99 a level may have (50)")
    a("--routes", type=lambda t: [r for r in t.split(",") if r],
      default=["chat", "messages>chat"], help=f"of {', '.join(ROUTES)} (default "
      "chat,messages>chat: pass-through and translation in front of an OpenAI upstream)")
    a("--servers", type=lambda t: t.split(","), default=["floor", "streamflow", "litellm"],
      help="of floor (a byte-forwarding asyncio proxy: the least any proxy on asyncio "
           "pays), streamflow, litellm (default all three)")
    a("--litellm-python", help="interpreter with litellm[proxy] (default: "
      "$BENCH_LITELLM_PYTHON, else this one)")
    a("--open-streams", type=int, default=0, metavar="N",
      help="hold N slow streams open through each server instead of the matrix")
    a("--open-events", type=int, default=30, help="events per slow stream (default 30)")
    a("--open-gap", type=float, default=1.0, help="seconds between them (default 1)")
    a("--open-rate", type=float, default=1000.0, help="streams opened per second (1000)")
    a("--open-client-procs", type=int, default=2, help="raw client processes (default 2)")
    a("--gateway-workers", type=int, default=1, metavar="N",
      help="streamflow gateway --workers N (default 1: one process)")
    a("--quick", action="store_true", help="tiny sizes: a smoke run of seconds")
    a("--json", metavar="FILE", help="write the raw results here")
    return p


def _quick(args: argparse.Namespace) -> None:
    args.events, args.gap, args.min_events = 20, 0.002, 40
    args.concurrency, args.ramp, args.split_at = [1, 5], [10], 10
    if args.open_streams:
        args.open_streams, args.open_events, args.open_gap = min(args.open_streams, 50), 4, 0.5


def main(argv: Sequence[str] | None = None) -> int:
    """Start the servers, measure, print the tables; 2 when a needed part is missing."""
    args = _parser().parse_args(argv)
    if args.quick:
        _quick(args)
    unknown = [r for r in args.routes if r not in ROUTES]
    if unknown:
        print(f"unknown route(s) {unknown}; known: {', '.join(ROUTES)}", file=sys.stderr)
        return 2
    raise_nofile(4 * max(args.open_streams, 1000) + 1024)
    python = litellm_python(args.litellm_python) if "litellm" in args.servers else None
    if "litellm" in args.servers and python is None:
        print("note: no interpreter has litellm[proxy] (pip install -e '.[bench]' or "
              "--litellm-python); measuring without LiteLLM\n")
    shape = Shape(args.events, args.gap, args.size, args.per_chunk)
    settings = Settings(shape, args.concurrency, args.ramp, args.min_events, args.client_procs,
                        args.split_at, args.p99_budget_ms * 1e3)
    routes = [ROUTES[r] for r in args.routes]
    dialects = sorted({r.upstream for r in routes})
    facts: dict[str, object] = {
        "streamflow.compiled": streamflow.compiled,
        "gateway loop": "uvloop" if uses_uvloop(sys.executable) else "asyncio",
        "gateway workers": args.gateway_workers,
        "client": "raw sockets" if args.open_streams else "httpx"}
    servers: list[Server] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = FilePath(tmp)
        try:
            port = free_port()
            upstream = Server("upstream", python_module("bench.servers.upstream", "--port",
                                                        str(port)),
                              f"http://127.0.0.1:{port}", probe="/_stats").start(work)
            servers.append(upstream)
            httpx.post(upstream.url + "/_config", content=shape.to_json()).raise_for_status()
            cap = args.open_streams + 1000
            gateways = {d: gateway(upstream.url, d, cap, args.gateway_workers).start(work)
                        for d in dialects if "streamflow" in args.servers}
            servers += gateways.values()
            proxy = litellm(upstream.url, python, work, cap).start(work) if python else None
            if proxy is not None:
                servers.append(proxy)
                facts["litellm loop"] = "uvloop (its CLI's choice), 1 worker"
            through = [Path(f"streamflow {r.name}", r, gateways[r.upstream], upstream)
                       for r in routes if r.upstream in gateways]
            if "floor" in args.servers and not args.open_streams:
                servers.append(forward := floor(upstream.url).start(work))
                through.insert(0, Path("floor chat", ROUTES["chat"], forward, upstream))
            if proxy is not None:
                through += [Path(f"litellm {r.name}", r, proxy, upstream) for r in routes]
            raw: dict[str, Any] = {"facts": facts, "args": vars(args)}
            if args.open_streams:
                _open(args, through, raw)
            else:
                direct = {f"direct {n}": Path(f"direct {n}", ROUTES[n], None, upstream)
                          for n in ("chat", "messages")}
                print(f"# bench.servers\n\n{header(settings, facts)}\n", flush=True)
                outcome = run_matrix(direct, through, settings,
                                     say=lambda line: print(line, file=sys.stderr, flush=True))
                print("\n## every path, every concurrency\n\n" + levels_table(outcome.levels))
                print("\n## sustained load\n\n"
                      + sustained_table(outcome, settings.p99_budget_us))
                if proxy is not None and gateways:
                    print("\n## streamflow / LiteLLM (below 1: streamflow uses less)\n\n"
                          + ratios_table(outcome.levels))
                raw["levels"] = [lv.summary() for lv in outcome.levels]
                raw["sustained"] = {name: {
                    "held": s.held.concurrency if s.held else None,
                    "broke": s.broke.concurrency if s.broke else None,
                    "per_core": s.per_core, "lower_bound": s.limited_by_direct}
                    for name, s in outcome.sustained.items()}
            if args.json:
                FilePath(args.json).write_text(json.dumps(raw, indent=1, default=str))
        finally:
            for server in reversed(servers):
                server.stop()
    return 0


def _open(args: argparse.Namespace, through: list[Path], raw: dict[str, Any]) -> None:
    shape = Shape(args.open_events, args.open_gap, args.size, 1)
    print(f"# bench.servers --open-streams {args.open_streams}\n")
    results: list[OpenStreams] = []
    for path in through:
        print(f"  {path.name}: opening {args.open_streams} streams ...", file=sys.stderr,
              flush=True)
        results.append(open_streams(path, args.open_streams, shape, rate=args.open_rate,
                                    procs=args.open_client_procs))
    print(header(Settings(shape, min_events=args.open_streams), raw["facts"]) + "\n")
    print(open_streams_table(results))
    raw["open_streams"] = [r.summary() for r in results]


if __name__ == "__main__":
    raise SystemExit(main())
