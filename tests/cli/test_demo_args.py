"""``streamflow demo``'s arguments: refused by argparse with demo's usage, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def streamflow(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    return subprocess.run([sys.executable, "-m", "streamflow", *args], capture_output=True,
                          text=True, env=env, timeout=60, check=False)


def test_max_turns_1_stops_cleanly_after_the_tool_call() -> None:
    proc = streamflow("demo", "--fast", "--plain", "--max-turns", "1")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "ExceptionGroup" not in proc.stderr
    assert "✖ stopped after 1 turn: the model still asks for tools (--max-turns)" in proc.stderr
    assert "get_weather" in proc.stderr  # the tool still ran and showed its result


@pytest.mark.parametrize(("args", "complaint"), [
    (["--max-turns", "0"], "argument --max-turns: must be at least 1, not 0"),
    (["--max-turns", "-3"], "argument --max-turns: must be at least 1, not -3"),
    (["--max-turns", "two"], "argument --max-turns: not a whole number: 'two'"),
    (["--thinking-budget", "-1"], "argument --thinking-budget: must be at least 0, not -1"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_arguments_get_demos_own_usage(args: list[str], complaint: str) -> None:
    proc = streamflow("demo", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: streamflow demo ")
    assert f"streamflow demo: error: {complaint}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_other_subcommands_get_their_own_usage_too() -> None:
    proc = streamflow("inspect", "x.sse", "--bogus")
    assert proc.returncode == 2 and proc.stderr.startswith("usage: streamflow inspect ")
