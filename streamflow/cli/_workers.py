"""``streamflow gateway --workers N``: N gateway processes on one listening socket.

The parent binds ``--listen`` once and starts N workers, each the same command
(``python -m streamflow gateway ...``) serving that socket, inherited by file
descriptor: the kernel hands each new connection to one of them. The gateway
keeps no state between requests, so any worker can take any request; with no
``--carry-key-env`` the parent draws one random replay-state key for all of them,
so a token one worker signed is read by the others.

The parent supervises: a worker that dies is started again (one that dies within
``EARLY`` seconds of its start, ``GIVE_UP`` times in a row, stops the whole
command with exit 1: it would only die again); SIGINT or SIGTERM is passed to the
workers, which finish their open streams as a single gateway does (uvicorn's
graceful shutdown) within ``STOP_GRACE`` seconds or are killed, and the parent exits
0 once they are gone.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from types import FrameType

CARRY_ENV = "STREAMFLOW_GATEWAY_WORKERS_CARRY_KEY"
"""Where the parent puts the shared replay-state key when none is configured."""

EARLY = 2.0
GIVE_UP = 5
STOP_GRACE = 30.0  # seconds workers get to finish before they are killed


def bind(host: str, port: int) -> socket.socket:
    """The listening socket the workers share (IPv4 or IPv6, as ``host`` is)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def worker_argv(argv: Sequence[str], fd: int) -> list[str]:
    """The worker's command: ``argv`` (the command line after ``streamflow``) without
    ``--workers``, serving the inherited socket ``fd``."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            out.append(arg)
    return [sys.executable, "-m", "streamflow", *out, "--listen-fd", str(fd)]


def supervise(argv: Sequence[str], host: str, port: int, workers: int,
              carry_key_env: str | None) -> int:
    """Run ``workers`` gateways on ``host:port`` until SIGINT/SIGTERM; the exit code."""
    try:
        sock = bind(host, port)
    except OSError as exc:
        print(f"streamflow gateway: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    env = dict(os.environ)
    command = worker_argv(argv, sock.fileno())
    if carry_key_env is None:  # one key for all, so any worker reads another's tokens
        env[CARRY_ENV] = secrets.token_hex(32)
        command += ["--carry-key-env", CARRY_ENV]
    stopping: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    running: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
    early = 0
    try:
        print(f"streamflow gateway: {workers} workers on http://{host}:{port}",
              file=sys.stderr, flush=True)
        while not stopping:
            for slot in range(workers):
                if slot not in running:
                    # its own process group: a Ctrl-C reaches the parent alone, which
                    # passes one SIGTERM on (a second signal would cut open streams)
                    process = subprocess.Popen(command, env=env, pass_fds=(sock.fileno(),),
                                               process_group=0)
                    running[slot] = (process, time.monotonic())
            time.sleep(0.2)
            for slot, (process, started) in list(running.items()):
                if process.poll() is None:
                    continue
                del running[slot]
                if stopping:
                    break
                early = early + 1 if time.monotonic() - started < EARLY else 0
                print(f"streamflow gateway: worker {process.pid} exited "
                      f"({process.returncode}); starting another", file=sys.stderr, flush=True)
                if early >= GIVE_UP:
                    print(f"streamflow gateway: workers die as they start ({GIVE_UP} in a row);"
                          " stopping", file=sys.stderr, flush=True)
                    return 1
        return 0
    finally:
        _stop(running.values())
        sock.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def die_with_parent() -> None:
    """In a worker: have the kernel send SIGTERM when the parent dies (Linux), so a
    killed supervisor leaves no worker serving behind it."""
    if sys.platform != "linux":
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the parent died before the call
        os.kill(os.getpid(), signal.SIGTERM)


def _stop(running: Iterable[tuple[subprocess.Popen[bytes], float]]) -> None:
    processes = [process for process, _ in running]
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    for process in processes:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
