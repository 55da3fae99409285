"""The system parts some tests drive for real -- redis-server, chromium, node and npm's
packages -- found on ``PATH``; a test that needs a missing one skips, saying which and how
to get it.

CI installs every part, so there a missing one is a broken CI, not a reason to skip:
``STREAMFLOW_TEST_ALL_PARTS=1`` (set by ``.ci/run``) turns these skips into failures.
Real recordings (:mod:`realdata`) are no part: they are only in the team's checkout.

Import as ``from parts import program`` (``tests/`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

ALL_PARTS = "STREAMFLOW_TEST_ALL_PARTS"
INSTALL = {
    "redis-server": "apt-get install -y redis-server",
    "redis-cli": "apt-get install -y redis-server",
    "chromium": "apt-get install -y chromium",
    "node": "apt-get install -y nodejs npm",
    "npm": "apt-get install -y nodejs npm",
    "haproxy": "apt-get install -y haproxy",
}


def required() -> bool:
    """True when every part must be there (CI): a missing one fails the test."""
    return os.environ.get(ALL_PARTS, "") not in ("", "0")


def missing(reason: str, *, module: bool = False) -> NoReturn:
    """Skip for ``reason`` (the whole module with ``module=True``); fail instead in CI."""
    if required():
        pytest.fail(f"{reason} [{ALL_PARTS} is set: CI installs every part]", pytrace=False)
    pytest.skip(reason, allow_module_level=module)


def find(*names: str) -> str | None:
    """The first of ``names`` found on ``PATH``, or None."""
    for name in names:
        path = shutil.which(name)
        if path is not None:
            return path
    return None


def program(*names: str, module: bool = False) -> str:
    """The path of the first of ``names`` on ``PATH``; skips the test when none is."""
    path = find(*names)
    if path is None:
        missing(f"{names[0]} is not on PATH ({INSTALL.get(names[0], 'install it')}; "
                ".ci/run does)", module=module)
    return path


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM ``proc`` and reap it; SIGKILL if it is still there after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextmanager
def locked(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on file ``lock`` (pytest-xdist workers, parallel runs)."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the workers may each try, npm copes
        yield
        return
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def npm_install(node_dir: Path, packages: tuple[str, ...], memo: Path | None) -> Path:
    """``node_dir`` with ``packages`` installed by npm from its package.json, once.

    Skips when node/npm are not on PATH or the registry cannot be reached (a user
    offline): npm's retries are cut to seconds then, never CI's. ``memo`` (a file
    every pytest-xdist worker of this run sees) keeps the other workers from trying
    again after one failed.
    """
    program("node")
    npm = program("npm")
    modules = node_dir / "node_modules"

    def installed() -> bool:
        return all((modules / name / "package.json").exists() for name in packages)

    key = hashlib.sha256(str(node_dir.resolve()).encode()).hexdigest()[:16]
    with locked(Path(tempfile.gettempdir()) / f"streamflow-npm-{key}.lock"):
        if installed():
            return node_dir
        if memo is not None and memo.exists():
            missing(memo.read_text(encoding="utf-8"))
        quick = [] if required() else ["--fetch-retries=1", "--fetch-retry-mintimeout=1000",
                                       "--fetch-retry-maxtimeout=3000"]
        try:
            done = subprocess.run([npm, "install", "--no-audit", "--no-fund",
                                   "--loglevel=error", *quick], cwd=node_dir,
                                  capture_output=True, text=True, timeout=600)
            error = done.stderr if done.returncode != 0 or not installed() else None
        except subprocess.TimeoutExpired:
            error = "npm install took over 10 minutes"
        if error is None:
            return node_dir
        lines = [line for line in error.splitlines() if line.strip()]
        reason = (f"npm install of {', '.join(packages)} failed (npm registry unreachable?): "
                  + " | ".join(lines[:3])[:400])
        if memo is not None:
            memo.write_text(reason, encoding="utf-8")
        missing(reason)
