"""The processes of a run: start, wait for, stop, and read CPU and memory from ``/proc``.

CPU is ``utime + stime`` of ``/proc/<pid>/stat`` (clock ticks, usually 10 ms, which
include the process's exited threads) summed over the process and its live
descendants; memory is ``VmRSS`` of ``/proc/<pid>/status`` summed the same way.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

__all__ = ["Server", "cpu_seconds", "free_port", "raise_nofile", "rss_bytes", "tree"]

_TICK = os.sysconf("SC_CLK_TCK")
ROOT = Path(__file__).resolve().parents[2]


def raise_nofile(want: int = 1 << 20) -> int:
    """Raise this process's open-file limit as far as allowed (children inherit it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for limit in (max(want, hard), hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, limit), limit))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree(pid: int) -> list[int]:
    """``pid`` and its live descendants."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its descendants."""
    total = 0
    for each in tree(pid):
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return total / _TICK


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants."""
    total = 0
    for each in tree(pid):
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


@dataclass
class Server:
    """A server process started by the bench, ready once ``probe`` answers over HTTP."""

    name: str
    argv: Sequence[str]
    url: str
    probe: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    def start(self, logs: Path, timeout: float = 120.0) -> Server:
        """Start the process and wait until it answers any HTTP status on ``probe``."""
        self.log = logs / f"{self.name}.log"
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}"
               f"{os.environ.get('PYTHONPATH', '')}", **self.env}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                            env=env, cwd=ROOT)
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=5.0) as client:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.process.returncode}; "
                                       f"its log:\n{self.log.read_text()[-3000:]}")
                try:
                    client.get(self.url + self.probe)
                    return self
                except httpx.TransportError as error:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{self.name} did not answer in {timeout:.0f} s"
                                           ) from error
                    time.sleep(0.2)

    @property
    def pid(self) -> int:
        """The process id (started)."""
        assert self.process is not None, "not started"
        return self.process.pid

    def stop(self) -> None:
        """Terminate the process (and, if it ignores that, kill it)."""
        if self.process is None or self.process.poll() is not None:
            return
        children = tree(self.process.pid)[1:]
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for child in children:  # workers a server left behind
            try:
                os.kill(child, 9)
            except OSError:
                pass


def python_module(module: str, *args: str, python: str = sys.executable) -> list[str]:
    """The argv running ``python -m module args``."""
    return [python, "-m", module, *args]
