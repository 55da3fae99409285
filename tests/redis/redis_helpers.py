"""Start and stop a real ``redis-server`` process; free loopback ports."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    """A loopback TCP port nobody listens on (right now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_pid(port: int) -> int | None:
    """The process id of the Redis answering on ``port``, or None when none answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"INFO server\r\n")
            reply = b""
            while b"process_id:" not in reply or not reply.endswith(b"\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                reply += chunk
    except OSError:
        return None
    line = reply.split(b"process_id:", 1)[1].split(b"\r\n", 1)[0]
    return int(line)


def ping(port: int) -> bool:
    """True when a Redis answers PING on ``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` on 127.0.0.1: no persistence, files in ``tmp``."""

    def __init__(self, binary: str, tmp: Path) -> None:
        self.binary = binary
        self.tmp = tmp
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start on ``self.port``; on a fresh port when another process (a parallel
        pytest-xdist worker) took that one between :func:`free_port` and the bind."""
        for _attempt in range(3):
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                 str(self.tmp), "--save", "", "--appendonly", "no", "--daemonize", "no",
                 "--loglevel", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while server_pid(self.port) != self.proc.pid:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            else:
                return
            self.stop()
            self.port = free_port()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(16)
