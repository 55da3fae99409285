"""Every Python code block of the README runs as written, against the loopback replay server.

Each block runs in its own interpreter, in a folder holding ``turn.sse`` (the body the
README's file examples open), with ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``
pointing at a real loopback HTTP server that replays that body for any path -- so
the samples that talk to an API run offline, unchanged.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
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
