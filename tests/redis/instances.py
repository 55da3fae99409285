"""App instances in their own processes: ``uvicorn examples.resumable_chat:app`` on free ports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from redis_helpers import free_port

ROOT = Path(__file__).resolve().parents[2]


class Instance:
    """One uvicorn process serving the example app against ``redis_url``."""

    def __init__(self, redis_url: str, log: Path, **env: str) -> None:
        self.port = free_port()
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"
        environ = {**os.environ, "REDIS_URL": redis_url, **env}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "examples.resumable_chat:app", "--port",
             str(self.port), "--log-level", "warning"], cwd=ROOT, env=environ,
            stdout=subprocess.DEVNULL, stderr=self.log.open("wb"))

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"instance exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/chat/ready/stream", timeout=1).status_code == 204:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"instance on port {self.port} did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no terminal entry, no more heartbeats."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
