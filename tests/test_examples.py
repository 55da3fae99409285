"""Each example runs offline as a user would run it, and says what it should."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docblocks import private_imports

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_the_examples_import_public_names_only() -> None:
    """No ``streamflow._x`` / ``streamflow.a._b`` module, no ``_name`` from a public one
    (the docs' blocks are held to the same in tests/docs/test_code_blocks.py)."""
    found = {p.name: private_imports(p.read_text(encoding="utf-8"))
             for p in sorted(EXAMPLES.glob("*.py"))}
    assert {name: names for name, names in found.items() if names} == {}


def run_example(name: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True,
                          text=True, timeout=60, cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("name", "expected"), [
    ("compose_pipeline.py", ["Sure. Let me look that up. One moment!", "[usage] 37 tokens out",
                             "[message] tool_call: {'city': 'Paris', 'unit': 'celsius'}"]),
    ("custom_operator.py", ["sentence: 'Sure.'", "sentence: 'Let me look that up.'",
                            "sentence: 'One moment!'"]),
    ("per_block_ui.py", ["[0] thinking", "    'The user wants '", "[1] text", "    'One moment!'",
                         "[2] tool call get_weather (toolu_demo)",
                         "    arguments: {'city': 'Paris', 'unit': 'celsius'}",
                         "message: tool_call, 3 blocks, 37 tokens out"]),
    ("tool_dispatch.py", ["Sure. Let me look that up. One moment!",
                          "[tools] get_weather({'city': 'Paris', 'unit': 'celsius'}) -> "
                          "{'city': 'Paris', 'temperature': 21, 'unit': 'celsius'}",
                          "[invalid] invalid arguments for 'get_weather': 1 error(s): "
                          "Input should be 'celsius' or 'fahrenheit'"]),
    ("agent_tools.py", ["Sure. Let me look that up. One moment!",
                        "[agent] 2 turns: 'It is 21 °C in Paris right now.'",
                        "[agent] 115 tokens in, 49 out in total",
                        "[agent] tool results: [{'city': 'Paris', 'temperature': 21"]),
    ("cancel_stream.py", ["server observed disconnect: True"]),
    ("mcp_tools.py", ["[mcp] tools: ['get_forecast']",
                      "[progress] asking the weather service about Lisbon (1/2)",
                      "[mcp] get_forecast -> {'city': 'Lisbon', 'high_c': 24",
                      "[agent] 2 turns: 'Tomorrow in Lisbon: sunny, up to 24 °C.'"]),
])
def test_example_runs_and_prints(name: str, expected: list[str]) -> None:
    out = run_example(name, *(["--seconds", "0.3"] if name == "cancel_stream.py" else []))
    for line in expected:
        assert line in out


def test_per_block_ui_shows_no_empty_fragment() -> None:
    out = run_example("per_block_ui.py")
    assert "''" not in out and "thinking.delta" not in out


def test_the_agent_example_renders_the_tool_result() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / "agent_tools.py")],
                          capture_output=True, text=True, timeout=60, cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert '✓ get_weather → {"city":"Paris","temperature":21,"unit":"celsius"}' in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-only")
def test_ctrl_c_closes_the_connection() -> None:
    proc = subprocess.Popen([sys.executable, str(EXAMPLES / "cancel_stream.py")], cwd=EXAMPLES,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("streaming")
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "server observed disconnect: True" in out and out.rstrip().endswith("bye")


def test_the_agent_stream_example_shows_one_run_across_an_approval() -> None:
    out = run_example("agent_stream.py")
    for line in ["  [research] progress: read review page 1 of 2",
                 "  [research] -> {'best': 'Casa Lisboa', 'rating': 4.8}",
                 "-> Casa Lisboa (4.8).",
                 "approval needed: book_table({'restaurant': 'Casa Lisboa', 'time': '20:00'})",
                 "[pending] ['book_table']",
                 "-> booked Casa Lisboa at 20:00",
                 "[agent] 3 turns: 'Booked: Casa Lisboa at 20:00.'",
                 "[agent] 200 tokens in, with the sub-agent's"]:
        assert line in out
