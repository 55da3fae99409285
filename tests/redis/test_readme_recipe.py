"""docs/resume.md, "Two instances and one Redis": the two-instance recipe runs as written.

``tests/docs/test_code_blocks.py`` runs the same block; both hold one lock while they do,
so two xdist workers never share its fixed ports.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from parts import locked, program

ROOT = Path(__file__).resolve().parents[2]


def recipe() -> str:
    """The shell block of the guide's section that starts ``redis-server``."""
    text = (ROOT / "docs" / "resume.md").read_text(encoding="utf-8")
    section = text.split("## Two instances and one Redis", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return next(b for b in blocks if b.startswith("redis-server"))


def busy(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_the_two_instance_recipe_runs_as_written() -> None:
    program("redis-server"), program("redis-cli")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    with locked(Path(tempfile.gettempdir()) / "streamflow-resume.lock"):
        taken = [p for p in (6399, 8001, 8002) if busy(p)]
        if taken:
            pytest.skip(f"the recipe's ports {taken} are in use on this machine")
        done = subprocess.run(["bash", "-c", recipe()], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=180)
    assert "the whole answer, each event once: True" in done.stdout, done.stdout + done.stderr
    assert "instance 2:" in done.stdout
    assert not busy(6399)  # the recipe cleans up after itself
