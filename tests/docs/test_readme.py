"""Every code block and command of the README runs as written, on what ships with the package.

Each Python block runs in its own interpreter, in a folder holding ``turn.sse`` (the
body the README's comments mention), with ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``
pointing at a real loopback HTTP server that replays that body for any path -- so
the samples that talk to an API run offline, unchanged. The commands (``$ ...`` lines
and ``bash`` blocks) run in a shell, each block in a fresh folder, against the
bundled recordings the README names; an output shown under a command is compared
with what the command prints. Only installs (``pip``, ``apt-get``) and the commands
that run the test suite or a build are not run here (the list is printed on skip;
``tests/docs/test_site.py`` builds the documentation site).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

import streamflow
from streamflow.server import ReplayServer, Route

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TURN = (ROOT / "tests" / "data" / "reactive" / "turn.sse").read_bytes()
BLOCKS = re.findall(r"^```python\n(.*?)^```", README, flags=re.S | re.M)


def test_the_first_code_sample_is_the_async_for_form() -> None:
    first = re.search(r"^```(\w*)\n(.*?)^```", README, flags=re.S | re.M)
    assert first is not None and first.group(1) == "python"
    assert "async with streamflow.stream(" in first.group(2)
    assert "async for event in s" in first.group(2)


@pytest.fixture
def anyio_backend() -> str:
    """The blocks run in their own interpreters; the server needs one loop only."""
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("index", range(len(BLOCKS)))
async def test_readme_block_runs(index: int, tmp_path: Path) -> None:
    missing = [m for m in re.findall(r"^(?:from|import) (\w+)", BLOCKS[index], flags=re.M)
               if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"README block {index} needs {', '.join(missing)} (not installed)")
    (tmp_path / "turn.sse").write_bytes(TURN)
    script = tmp_path / f"block{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    async with ReplayServer(Route.from_body(TURN)) as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test",
               "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "test",
               "PYTHONPATH": str(ROOT)}
        done = await anyio.to_thread.run_sync(lambda: subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=60))
    assert done.returncode == 0, f"README block {index}:\n{BLOCKS[index]}\n{done.stderr}"
    if index == 0:
        assert streamflow.assemble(TURN).text in done.stdout


# --- the commands ------------------------------------------------------------------------

FENCES = re.findall(r"^```(\w*)\n(.*?)^```", README, flags=re.S | re.M)
NOT_RUN = (re.compile(r"^(?:\w+=\S+ )*(?:pip|apt-get) "),  # installs: CI's .ci/run does them
           re.compile(r"^(?:\w+=\S+ )*python -m (?:pytest|build)\b"),  # the suite, a build
           re.compile(r"^mkdocs build\b"))  # the site: tests/docs/test_site.py builds it
REDIS_BLOCK = "redis-server --port"


@dataclass
class Command:
    """One README command line, the output shown under it (if any), and its fence."""

    line: str
    output: list[str]
    fence: int


def _logical_lines(text: str) -> list[str]:
    """Lines with ``\\`` continuations joined."""
    return text.replace("\\\n", " ").splitlines()


def readme_commands() -> list[Command]:
    """Every command of the README, in order: ``$`` lines of plain blocks, bash blocks' lines."""
    commands: list[Command] = []
    for index, (lang, body) in enumerate(FENCES):
        if lang == "bash":
            for line in _logical_lines(body):
                line = line.split(" #", 1)[0].strip()
                for part in filter(None, (p.strip() for p in line.split("&&"))):
                    commands.append(Command(part, [], index))
        elif lang == "":
            for line in _logical_lines(body):
                if line.startswith("$ "):
                    command = re.sub(r"\s+#.*$", "", line[2:]).strip()
                    commands.append(Command(command, [], index))
                elif commands and commands[-1].fence == index:
                    commands[-1].output.append(line)
    return commands


COMMANDS = readme_commands()


def _runs(command: Command) -> bool:
    return not any(rule.search(command.line) for rule in NOT_RUN)


def test_the_readme_names_its_commands() -> None:
    run = {c.line.split()[1] for c in COMMANDS if c.line.startswith("streamflow ")}
    assert {"demo", "inspect", "convert", "gateway"} <= run
    from streamflow.cli.main import COMMANDS as SUBCOMMANDS

    for name in SUBCOMMANDS:  # the command list names every subcommand
        assert f"- `streamflow {name}" in README, name


def _shim(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``streamflow`` and ``python`` are this interpreter and this tree."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in (("streamflow", f'exec "{sys.executable}" -m streamflow "$@"'),
                         ("python", f'exec "{sys.executable}" "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{target}\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COLUMNS")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               COLUMNS="200")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_gateway(line: str, cwd: Path, env: dict[str, str]) -> None:
    """A ``streamflow gateway`` line: it must start listening, then stop cleanly on Ctrl-C."""
    pytest.importorskip("uvicorn", reason="the gateway extra is not installed")
    port = _free_port()
    line = re.sub(r"--listen \S+", f"--listen 127.0.0.1:{port}", line)
    env = {**env, **{v: "test" for v in re.findall(r"--api-key-env (\w+)", line)}}
    proc = subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.2)
        assert proc.poll() is None, f"{line}\n{proc.communicate()[1]}"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0, proc.communicate()[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _same_output(command: Command, printed: str) -> None:
    shown = [line.rstrip() for line in command.output if line.strip()]
    got = [line.rstrip() for line in printed.splitlines() if line.strip()]
    if "--timeline" in command.line:  # times differ from run to run; the rows do not
        def labels(lines: list[str]) -> list[str]:
            return [w for w in (line.split()[0] for line in lines) if re.match(r"[^\W\d]|◷|⚙", w)]

        assert labels(shown) == labels(got), printed
    else:
        assert got == shown, printed


FENCES_WITH_COMMANDS = sorted({c.fence for c in COMMANDS})


@pytest.mark.parametrize("fence", FENCES_WITH_COMMANDS)
def test_readme_commands_run(fence: int, tmp_path: Path) -> None:
    commands = [c for c in COMMANDS if c.fence == fence]
    todo = [c for c in commands if _runs(c)]
    if not todo:
        pytest.skip("installs or runs the suite only: " + "; ".join(c.line for c in commands))
    env = _shim(tmp_path)
    if REDIS_BLOCK in FENCES[fence][1]:
        _run_redis_block(FENCES[fence][1], env)
        return
    work = tmp_path / "work"
    work.mkdir()
    for command in todo:
        if command.line.startswith("streamflow gateway"):
            _serve_gateway(command.line, work, env)
            continue
        done = subprocess.run(["bash", "-c", command.line], cwd=work, env=env, text=True,
                              capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"$ {command.line}\n{done.stderr}"
        if command.output:
            _same_output(command, done.stdout)


def _run_redis_block(script: str, env: dict[str, str]) -> None:
    """The resume walkthrough, as written, from the repository root."""
    for tool in ("redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (apt-get install -y redis-server)")
    pytest.importorskip("redis", reason="the redis extra is not installed")
    pytest.importorskip("uvicorn", reason="the web extra is not installed")
    for port in map(int, re.findall(r"--port (\d+)", script)):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                pytest.skip(f"port {port}, which the README's walkthrough uses, is taken")
    done = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "the whole answer, each event once: True" in done.stdout


# --- the install lines and the extras -----------------------------------------------------

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
CLIENT_SDKS = {"anthropic", "openai"}  # the README's gateway clients: the user's own SDKs


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_every_install_line_names_our_distribution_and_real_extras() -> None:
    assert PYPROJECT["name"] == "streamflow-llm"
    extras = set(PYPROJECT["optional-dependencies"])
    texts = {"README.md": README, **{str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                                     for p in [*(ROOT / "docs").glob("*.md"),
                                               *(ROOT / "streamflow").rglob("*.py")]}}
    for name, text in texts.items():
        assert not re.search(r"install[^\n]*\bstreamflow\[", text), name  # the other project's
        for named in re.findall(r"(?:streamflow-llm|\.)\[([\w,]+)\]", text):
            assert set(named.split(",")) <= extras, (name, named)


def test_the_readme_blocks_import_only_what_the_install_lines_install() -> None:
    shipped = {_requirement_name(r) for r in PYPROJECT["dependencies"]}
    for extra, requirements in PYPROJECT["optional-dependencies"].items():
        if extra not in ("test", "bench"):
            shipped |= {_requirement_name(r) for r in requirements}
    distributions = importlib.metadata.packages_distributions()
    for block in BLOCKS:
        for module in re.findall(r"^(?:from|import) (\w+)", block, flags=re.M):
            if module in sys.stdlib_module_names or module == "streamflow":
                continue
            names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
            assert names & (shipped | CLIENT_SDKS), (module, names)
