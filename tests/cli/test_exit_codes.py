"""One exit-code scheme for every command, and one line naming a missing extra (never a traceback).

Each command runs in its own interpreter. A missing extra is simulated the way an
install without it looks to Python: ``sys.modules[name] = None`` makes ``import
name`` raise ``ModuleNotFoundError`` -- for every optional package at once, so a
command that needs none must still work.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from realdata import DATA, ROOT

from streamflow._extras import EXTRA_OF
from streamflow.cli.main import COMMANDS

FAILED = DATA / "openai_chat" / "error_mid_stream.sse"
NOT_A_STREAM = DATA / "cli" / "not_a_stream.txt"
GATEWAY = ["gateway", "--upstream", "http://127.0.0.1:9", "--upstream-dialect", "anthropic"]


def streamflow(*argv: str, hide: tuple[str, ...] = (), cwd: Path | None = None
               ) -> subprocess.CompletedProcess[str]:
    """``streamflow ARGV`` in a fresh interpreter where the modules ``hide`` are not installed."""
    code = ("import sys\n"
            f"for name in {list(hide)!r}: sys.modules[name] = None\n"
            "from streamflow.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=120, env=env, cwd=cwd, stdin=subprocess.DEVNULL)


OPTIONAL = tuple(EXTRA_OF)

MISSING = [  # (command line, the module the install lacks, the extra the line must name)
    (["convert", "anthropic-turn1.sse", "--to", "ag-ui"], "ag_ui", "web"),
    (["demo", "--web", "--offline"], "starlette", "web"),
    (["demo", "--web", "--offline"], "uvicorn", "web"),
    ([*GATEWAY], "uvicorn", "gateway"),
    ([*GATEWAY], "starlette", "gateway"),
]


@pytest.mark.parametrize(("argv", "module", "extra"), MISSING,
                         ids=[f"{a[0]}-{m}" for a, m, _ in MISSING])
def test_a_missing_extra_is_one_line_naming_it(argv: list[str], module: str, extra: str) -> None:
    done = streamflow(*argv, hide=(module,))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"streamflow {argv[0]}: {module} is not installed")
    assert f"pip install 'streamflow-llm[{extra}]'" in lines[0]
    assert done.stdout == ""


WITHOUT_EXTRAS = [  # commands that need no extra still work with every optional package gone
    ["inspect", "anthropic-turn1.sse"],
    ["inspect", "--json", "openai-chat-turn2.sse"],
    ["replay", "--speed", "0", "anthropic-turn2.sse"],
    ["convert", "anthropic-turn1.sse", "--to", "gemini"],
    ["demo", "--offline", "--fast"],
]


@pytest.mark.parametrize("argv", WITHOUT_EXTRAS, ids=[" ".join(a[:2]) for a in WITHOUT_EXTRAS])
def test_commands_needing_no_extra_run_on_the_base_install(argv: list[str]) -> None:
    done = streamflow(*argv, hide=OPTIONAL)
    assert done.returncode == 0, done.stderr
    assert done.stdout


def test_every_command_is_covered() -> None:
    covered = {argv[0] for argv, _, _ in MISSING} | {argv[0] for argv in WITHOUT_EXTRAS}
    assert covered == set(COMMANDS)


CODES = [  # (command line, exit code): 0 ok, 1 a stream that failed, 2 usage / not a stream
    (["inspect", str(FAILED)], 1),
    (["convert", str(FAILED), "--to", "anthropic"], 1),
    (["replay", "--speed", "0", str(FAILED)], 1),
    (["inspect", str(NOT_A_STREAM)], 2),
    (["convert", str(NOT_A_STREAM), "--to", "anthropic"], 2),
    (["replay", str(NOT_A_STREAM)], 2),
    (["inspect", "no-such-file.sse"], 2),
    (["convert", "no-such-file.sse", "--to", "anthropic"], 2),
    (["replay", "no-such-file.sse"], 2),
    (["inspect", "--no-such-option", "anthropic-turn1.sse"], 2),
    (["convert", "anthropic-turn1.sse", "--to", "no-such-target"], 2),
    (["convert", "anthropic-turn1.sse", "--to", "openai-chat", "--option", "bogus=1"], 2),
    (["replay", "--speed", "fast", "anthropic-turn1.sse"], 2),
    (["demo", "--max-turns", "0"], 2),
    ([*GATEWAY, "--listen", "nowhere"], 2),
    (["no-such-command"], 2),
    (["inspect", "anthropic-turn1.sse"], 0),
    (["convert", "openai-chat-turn1.sse", "--to", "anthropic"], 0),
]


@pytest.mark.parametrize(("argv", "code"), CODES, ids=[" ".join(a[:2]) for a, _ in CODES])
def test_one_exit_code_scheme(argv: list[str], code: int, tmp_path: Path) -> None:
    done = streamflow(*argv, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr


def test_convert_writes_nothing_for_a_body_that_is_no_stream(tmp_path: Path) -> None:
    out = tmp_path / "out.sse"
    done = streamflow("convert", str(NOT_A_STREAM), "--to", "anthropic", "-o", str(out))
    assert done.returncode == 2
    assert "is not a stream of any known dialect" in done.stderr
    assert out.read_bytes() == b""


def test_the_scheme_is_documented_in_the_guide_and_the_help() -> None:
    guide = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "Exit codes, the same for every command" in guide
    done = streamflow("--help")
    assert done.returncode == 0
    assert "Exit codes, the same for every command" in " ".join(done.stdout.split())
