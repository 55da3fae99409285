"""Fixtures of the web tests: the real npm clients, installed once into tests/web/node."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from parts import npm_install

NODE_DIR = Path(__file__).resolve().parent / "node"
PACKAGES = ("ai", "ai-v6", "ai-latest", "@ag-ui/core", "@ag-ui/client")


def install_node_clients(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/web/node with ``ai`` v5, v6 (``ai-v6``), the current major (``ai-latest``) and the
    AG-UI packages installed (skips without node, npm or the registry). Under
    pytest-xdist the workers' temp dirs share this run's parent, where a failed install
    is noted so that only one worker waits for npm."""
    in_worker = "PYTEST_XDIST_WORKER" in os.environ
    memo = tmp_path_factory.getbasetemp().parent / "npm-install-failed.txt" if in_worker else None
    return npm_install(NODE_DIR, PACKAGES, memo)


@pytest.fixture(scope="session")
def node_clients(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/web/node with the real AI SDK v5 and AG-UI clients installed."""
    return install_node_clients(tmp_path_factory)
