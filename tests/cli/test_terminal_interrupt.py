"""Ctrl-C typed in a real terminal: one copy of the partial answer, marked interrupted.

The echoed ``^C`` used to wrap the cursor past rich's full-width live line, so the
region's erase missed it and the partial answer stayed on screen twice. The screen
is read with pyte, which (stricter than xterm) also wraps on a raw echoed ETX. Each case
types the interrupt character at a different moment of the stream.
"""

from __future__ import annotations

import sys

import pytest
from terminal import run_in_pty

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
OPENING = "Right now it's"


@pytest.mark.parametrize("delay", [0.15, 0.4, 0.7, 1.0, 1.3])
def test_ctrl_c_mid_answer_leaves_exactly_one_copy(delay: float) -> None:
    screen = run_in_pty(["replay", "anthropic-turn2.sse", "--speed", "0.3"],
                        interrupt_when=b"Right now", delay=delay)
    assert screen.code == 130
    assert screen.text.count(OPENING) == 1, screen.text
    assert "⏹ interrupted — partial answer above" in screen.text
    assert "^C" not in screen.text
    lines = [line for line in screen.lines if line]
    assert len(lines) == len(set(lines)), screen.text  # no line of the answer twice
    answer = next(i for i, line in enumerate(lines) if OPENING in line)
    mark = next(i for i, line in enumerate(lines) if "interrupted" in line)
    assert answer < mark == len(lines) - 2  # the partial, its mark, the footer
    assert "**" not in screen.text  # no raw Markdown left behind


def test_ctrl_c_in_the_demo_before_the_answer() -> None:
    screen = run_in_pty(["demo"], interrupt_when=b"weather", delay=0.3)
    assert screen.code == 130
    assert "⏹ interrupted" in screen.text and "^C" not in screen.text
    text_lines = [line for line in screen.lines if line.strip()]
    assert len(text_lines) == len(set(text_lines)), screen.text  # nothing drawn twice
