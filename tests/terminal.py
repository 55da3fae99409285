"""Run ``streamflow`` in a real pseudo-terminal and read the screen a user would see.

:func:`run_in_pty` forks the CLI (or any Python) on a pty of the given size, optionally types the
interrupt character (``Ctrl-C``, as a user would: the terminal driver sends
SIGINT and echoes it) once the output holds a marker, and returns everything
written plus the screen as ``pyte`` renders it (skipped when pyte is absent).
"""

from __future__ import annotations

import os
import select
import sys
import time
from dataclasses import dataclass

import pytest


@dataclass
class Screen:
    """What the terminal shows at the end: ``lines`` (rstripped), raw ``output``, ``code``."""

    lines: list[str]
    output: bytes
    code: int

    @property
    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n")


def run_in_pty(args: list[str], *, columns: int = 120, rows: int = 40,
               interrupt_when: bytes | None = None, delay: float = 0.0,
               env: dict[str, str] | None = None, timeout: float = 60.0,
               python: bool = False) -> Screen:
    """``python -m streamflow ARGS`` (``python``: ``python ARGS``) in a ``columns`` x
    ``rows`` pty (see the module doc)."""
    pyte = pytest.importorskip("pyte", reason="pyte renders the pty's screen (pip install pyte)")
    import fcntl
    import pty
    import struct
    import termios

    base = {k: v for k, v in os.environ.items()
            if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COLUMNS", "LINES", "NO_COLOR")}
    base["TERM"] = "xterm-256color"
    pid, fd = pty.fork()
    if pid == 0:  # the child: a real terminal of the asked size
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        command = args if python else ["-m", "streamflow", *args]
        os.execve(sys.executable, [sys.executable, *command], {**base, **(env or {})})
    output = b""
    marked_at: float | None = None
    sent = interrupt_when is None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.01)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            output += data
        if not sent and interrupt_when is not None:
            if marked_at is None and interrupt_when in output:
                marked_at = time.monotonic()
            if marked_at is not None and time.monotonic() - marked_at >= delay:
                os.write(fd, b"\x03")  # the interrupt character, typed
                sent = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    screen = pyte.Screen(columns, rows)
    stream = pyte.ByteStream(screen)
    stream.feed(output)
    return Screen([line.rstrip() for line in screen.display], output,
                  os.waitstatus_to_exitcode(status))
