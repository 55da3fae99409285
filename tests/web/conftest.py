"""Fixtures of the web tests: the real npm clients, installed once into tests/web/node."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
PACKAGES = ("ai", "@ag-ui/core", "@ag-ui/client")


@pytest.fixture(scope="session")
def node_clients() -> Path:
    """tests/web/node with ``ai`` v5 and the AG-UI packages installed (skips without node/npm)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run the real AI SDK / AG-UI clients "
                    "(CI installs them; apt-get install nodejs npm)")
    modules = NODE_DIR / "node_modules"
    if not all((modules / name / "package.json").exists() for name in PACKAGES):
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                              cwd=NODE_DIR, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.fail(f"npm install in {NODE_DIR} failed:\n{done.stderr[-2000:]}")
    return NODE_DIR
