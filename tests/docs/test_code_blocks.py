"""Every code block of the README and of the ``docs/`` pages runs as pasted.

Each ``python`` block runs in its own interpreter, in an empty folder -- what a user who
pastes it has -- so a block reads only what ships with the package (the bundled
recordings, by name) or what it writes itself. A block that talks to a provider reads
``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``; here they point at the demo's loopback
replay server (``streamflow.demo.server.DemoServer``), which answers like the API does.

A ``bash`` block runs as one script (``set -e``), a ``console`` block one ``$`` command
after the other, each compared with the output shown under it; both in an empty folder,
with ``streamflow`` and ``python`` this interpreter and no API key set, except a block
that names files of the checkout (``examples/...``), which runs from the repository root
as its text says. A ``streamflow gateway`` command must start listening, then stop
cleanly on Ctrl-C.

A block that cannot run as pasted says why in a ``<!-- not run: ... -->`` comment on the
line above it; those are skipped with that reason (``pytest -rs`` lists them), and
:func:`test_the_blocks_not_run_are_few_and_say_why` prints the list and keeps it short.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from docblocks import ROOT, RUN_LANGS, Block, all_blocks, logical_lines, private_imports
from parts import locked, missing, program

import streamflow
from streamflow.demo import recording
from streamflow.demo.server import DemoServer

BLOCKS = [b for b in all_blocks() if b.lang in RUN_LANGS]
PYTHON = [b for b in BLOCKS if b.lang == "python"]
COMMANDS = [b for b in BLOCKS if b.lang in ("bash", "console")]
NOT_RUN = [b for b in BLOCKS if b.not_run is not None]
MOST_NOT_RUN = 7
# what only an environment being set up, or this suite itself, can run
CANNOT_RUN_HERE = re.compile(r"^(?:\w+=\S+ )*(?:(?:pip|apt-get) install|python -m (?:pytest|build)"
                             r"|mkdocs build|llama-server)\b", re.M)
CHECKOUT = re.compile(r"\bexamples[/.]")
EXTRAS = {"mcp": "mcp", "starlette": "web", "uvicorn": "web", "redis": "redis"}


def _ids(blocks: list[Block]) -> list[str]:
    return [b.name for b in blocks]


def _not_run(block: Block) -> None:
    if block.not_run is not None:
        pytest.skip(f"{block.name} not run: {block.not_run}")


def _needs(code: str) -> None:
    """Skip (fail in CI) when a block imports a package this environment lacks."""
    for module in re.findall(r"^(?:from|import) (\w+)", code, flags=re.M):
        if importlib.util.find_spec(module) is None:
            extra = EXTRAS.get(module)
            missing(f"needs {module}" + (f" (the {extra} extra)" if extra else ""))


# --- the rules every block follows ------------------------------------------------------

def test_the_blocks_not_run_are_few_and_say_why() -> None:
    listing = "\n".join(f"  {b.name} ({b.lang}): {b.not_run}" for b in NOT_RUN)
    print(f"blocks not run ({len(NOT_RUN)}):\n{listing}")
    assert all(b.not_run for b in NOT_RUN), listing  # a reason, not an empty note
    assert len(NOT_RUN) <= MOST_NOT_RUN, listing


def test_what_cannot_run_here_is_marked() -> None:
    unmarked = [b.name for b in BLOCKS if b.not_run is None and b.lang != "python"
                and CANNOT_RUN_HERE.search(b.text.replace("$ ", ""))]
    assert unmarked == [], "installs, the suite, builds: mark the block <!-- not run: why -->"


def test_commands_are_in_bash_or_console_blocks() -> None:
    for block in all_blocks():
        assert block.lang not in ("sh", "shell", "zsh", "py", "python3", "pycon"), block.name
        if block.lang not in ("bash", "console"):
            assert not re.search(r"^\$ ", block.text, flags=re.M), block.name  # a console block
        if block.lang == "console":
            assert block.text.startswith("$ "), block.name


def test_the_docs_run_the_main_commands() -> None:
    run = {line.split()[1] for b in COMMANDS if b.not_run is None
           for line in logical_lines(b.text.replace("$ ", "")) if line.startswith("streamflow ")}
    assert {"demo", "inspect", "convert", "replay", "gateway"} <= run


def test_no_block_imports_a_private_module() -> None:
    found = {b.name: private_imports(b.text) for b in PYTHON}
    assert {k: v for k, v in found.items() if v} == {}


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
CLIENT_SDKS = {"anthropic", "openai"}  # the gateway's clients: the user's own SDKs


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_blocks_import_only_what_the_install_lines_install() -> None:
    shipped = {_requirement_name(r) for r in PYPROJECT["dependencies"]}
    for extra, requirements in PYPROJECT["optional-dependencies"].items():
        if extra not in ("test", "bench"):
            shipped |= {_requirement_name(r) for r in requirements}
    distributions = importlib.metadata.packages_distributions()
    for block in PYTHON:
        for module in re.findall(r"^(?:from|import) (\w+)", block.text, flags=re.M):
            if module in sys.stdlib_module_names or module == "streamflow":
                continue
            names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
            assert names & (shipped | CLIENT_SDKS), (block.name, module, names)


# --- the python blocks -------------------------------------------------------------------

@pytest.fixture
def anyio_backend() -> str:
    """The blocks run in their own interpreters; the servers need one loop only."""
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
async def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    _not_run(block)
    _needs(block.text)
    script = tmp_path / "block.py"
    script.write_text(block.text, encoding="utf-8")
    async with DemoServer("anthropic", fast=True) as claude, \
            DemoServer("openai-chat", fast=True) as gpt:
        env = {**_clean_env(), "ANTHROPIC_BASE_URL": claude.base_url, "ANTHROPIC_API_KEY": "test",
               "OPENAI_BASE_URL": gpt.base_url, "OPENAI_API_KEY": "test"}
        done = await anyio.to_thread.run_sync(lambda: subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=120, stdin=subprocess.DEVNULL))
    assert done.returncode == 0, f"{block.name}:\n{block.text}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    if "ANTHROPIC_BASE_URL" in block.text and "client.stream(" in block.text:  # the quick start
        assert streamflow.assemble(recording("anthropic", 1)).text in done.stdout


def _clean_env() -> dict[str, str]:
    """This environment without the keys and URLs a block would read from the user's."""
    drop = ("ANTHROPIC_", "OPENAI_", "GEMINI_", "COLUMNS", "REDIS_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PYTHONPATH"] = str(ROOT)
    return env


# --- the commands ------------------------------------------------------------------------

@dataclass
class Command:
    """One ``$`` line of a console block and the output shown under it."""

    line: str
    output: list[str]


def console_commands(text: str) -> list[Command]:
    commands: list[Command] = []
    for line in logical_lines(text):
        if line.startswith("$ "):
            commands.append(Command(re.sub(r"\s+#.*$", "", line[2:]).strip(), []))
        elif commands:
            commands[-1].output.append(line)
    return commands


def _shim(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``streamflow`` and ``python`` are this interpreter and this tree."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in (("streamflow", f'exec "{sys.executable}" -m streamflow "$@"'),
                         ("python", f'exec "{sys.executable}" "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{target}\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    env = _clean_env()
    env.update(PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                     env.get("PATH", "")]), COLUMNS="200")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _busy(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _serve_gateway(line: str, cwd: Path, env: dict[str, str]) -> None:
    """A ``streamflow gateway`` line: it must start listening, then stop cleanly on Ctrl-C."""
    if importlib.util.find_spec("uvicorn") is None:
        missing("the gateway extra is not installed")
    port = _free_port()
    line = re.sub(r"--listen \S+", f"--listen 127.0.0.1:{port}", line)
    env = {**env, **{v: "test" for v in re.findall(r"--(?:api|fallback)-key-env (\w+)", line)}}
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


@pytest.mark.parametrize("block", COMMANDS, ids=_ids(COMMANDS))
def test_commands_run(block: Block, tmp_path: Path) -> None:
    _not_run(block)
    env = _shim(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    if block.lang == "bash":
        _run_script(block, work, env)
        return
    for command in console_commands(block.text):
        assert not CHECKOUT.search(command.line), "a console block runs in an empty folder"
        if command.line.startswith("streamflow gateway"):
            _serve_gateway(command.line, work, env)
            continue
        done = subprocess.run(["bash", "-c", command.line], cwd=work, env=env, text=True,
                              capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"$ {command.line}\n{done.stderr}"
        if command.output:
            _same_output(command, done.stdout)


def _run_script(block: Block, work: Path, env: dict[str, str]) -> None:
    """A bash block as one script: from the checkout when it names its files, else ``work``."""
    in_checkout = bool(CHECKOUT.search(block.text))
    with contextlib.ExitStack() as stack:
        if "redis-server" in block.text:
            program("redis-server"), program("redis-cli")
            for module, extra in (("redis", "redis"), ("uvicorn", "web")):
                if importlib.util.find_spec(module) is None:
                    missing(f"the {extra} extra is not installed")
            # one walkthrough at a time (tests/redis/test_readme_recipe.py runs it too)
            stack.enter_context(locked(Path(tempfile.gettempdir()) / "streamflow-resume.lock"))
            taken = [p for p in taken_ports(block.text) if _busy(p)]
            if taken:
                pytest.skip(f"the ports {taken} the walkthrough uses are taken on this machine")
        done = subprocess.run(["bash", "-c", "set -e\n" + block.text],
                              cwd=ROOT if in_checkout else work, env=env, text=True,
                              capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{block.name}:\n{block.text}\n{done.stdout}\n{done.stderr}"
    if "redis-server" in block.text:  # what the text under the block says it prints
        assert "the whole answer, each event once: True" in done.stdout, done.stdout
        assert not any(map(_busy, taken_ports(block.text))), "the walkthrough cleans up"


def taken_ports(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"--port (\d+)", text)]
