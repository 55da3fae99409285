"""``python -m bench.servers --quick`` runs end to end on real servers (smoke test, no timing).

The loopback upstream, ``streamflow gateway`` and (when an interpreter has
``litellm[proxy]``: this one or ``$BENCH_LITELLM_PYTHON``) LiteLLM's proxy, each in
its own process; the tables must have a row per path and concurrency, and every
event the upstream sent must have reached the clients.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # bench/ is a top-level folder, not an installed package
pytest.importorskip("uvicorn", reason="the bench's servers run on uvicorn (gateway extra)")

from bench.servers.answer import STAMP, Shape, chat_answer  # noqa: E402
from bench.servers.proxies import litellm_python  # noqa: E402


def test_a_stamp_is_found_in_the_upstream_chunk_and_names_its_event() -> None:
    chunk = chat_answer.delta(123456789012, 7, Shape().size)
    (match,) = STAMP.finditer(chunk)
    assert (int(match[1]), int(match[2])) == (123456789012, 7)
    assert b'"content":"[123456789012.7]xxxx' in chunk and chunk.endswith(b"\n\n")


def _run(*args: str, tmp: Path) -> tuple[str, dict[str, object]]:
    out = tmp / "out.json"
    done = subprocess.run([sys.executable, "-m", "bench.servers", "--quick", "--json",
                           str(out), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, json.loads(out.read_text())


@pytest.mark.slow
def test_the_servers_bench_runs_quick_and_every_event_arrives(tmp_path: Path) -> None:
    stdout, raw = _run(tmp=tmp_path)
    servers = ["streamflow"] + (["litellm"] if litellm_python() else [])
    paths = ["direct chat"] + [f"{s} {r}" for s in servers for r in ("chat", "messages>chat")]
    for path in paths:
        for streams in (1, 5):
            assert f"| {path} | {streams} |" in stdout
    assert "## sustained load" in stdout and "streamflow.compiled" in stdout
    levels = raw["levels"]
    assert isinstance(levels, list)
    for level in levels:
        assert level["received"] == level["expected"] > 0, level
        assert level["errors"] == 0 and level["server_cpu_s"] >= 0


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_open_streams_counts_every_event_sent(tmp_path: Path, workers: int) -> None:
    stdout, raw = _run("--open-streams", "40", "--servers", "streamflow", "--routes", "chat",
                       "--gateway-workers", str(workers), tmp=tmp_path)
    (result,) = raw["open_streams"]  # type: ignore[misc]
    assert result["sent"] == result["received"] == 40 * 4 and result["lost"] == 0
    assert result["streams_ok"] == 40 and "| streamflow chat | 40 |" in stdout
    assert f"gateway workers: {workers}" in stdout
    assert result["rss_all_open"] > result["idle_rss"] > 0  # read over the process tree
