"""RenderSink over an answer a failover chain continued: what the user sees.

A continuation that drops nothing leaves the answer's text unbroken and notes the
attempt under the footer; one that drops a cut tool call shows that call cut, the note
at once, then the call whole. Piped (plain mode to a StringIO), on a terminal (rich's
output read back as a screen by pyte) and on a real pseudo-terminal.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from continued_stream import ContinuingSource, continued_call, continued_text
from rich.console import Console
from terminal import run_in_pty

import streamflow
from streamflow.reactive.sinks.render import RenderSink

NOTE = "↻ StreamTimeoutError: idle timeout after 2s — continued on backup (attempt 2"
TESTS = Path(__file__).resolve().parent.parent


class Ticker:
    def __init__(self, step: float = 1.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def plain(items: list[object], **kwargs: object) -> tuple[str, list[str]]:
    """Piped: (stdout, stderr lines)."""
    out, err = io.StringIO(), io.StringIO()
    sink = RenderSink(Console(file=out), err_file=err, **kwargs)  # type: ignore[arg-type]
    assert sink.plain
    for item in items:
        sink.on_next(item)
    sink.on_completed()
    return out.getvalue(), err.getvalue().splitlines()


def screen_of(raw: str, columns: int = 100, rows: int = 30) -> list[str]:
    """The non-blank lines a terminal shows after ``raw`` (pyte: cursor moves, erases)."""
    pyte = pytest.importorskip("pyte", reason="pyte renders the terminal's screen")
    screen = pyte.Screen(columns, rows)
    pyte.Stream(screen).feed(raw.replace("\n", "\r\n"))  # the tty's onlcr
    return [line.rstrip() for line in screen.display if line.strip()]


def on_terminal(items: list[object]) -> list[str]:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, force_interactive=True, width=100,
                      height=30, color_system="standard")
    sink = RenderSink(console, clock=Ticker())  # a frame per event: every live redraw
    for item in items:
        sink.on_next(item)
    sink.on_completed()
    return screen_of(buf.getvalue())


# -- piped -------------------------------------------------------------------------------

def test_piped_a_continued_sentence_is_one_unbroken_line_and_the_note_follows_the_footer(
        ) -> None:
    out, err = plain(continued_text())
    assert out == "The answer is forty-two.\n"  # no line break where the attempt changed
    footer, note = err
    assert footer.startswith("primary-model · 30 in · 12 out") and footer.endswith("stop")
    assert note == NOTE + ")"


def test_piped_a_dropped_tool_call_is_noted_at_once_before_the_footer() -> None:
    out, err = plain(continued_call())
    assert out == "Let me check.\n"  # the text the answer kept, once
    note, footer = err
    assert note == NOTE + ", 1 unfinished group(s) asked for again)"
    assert footer.endswith("tool_call")


def test_piped_a_continuation_without_an_endpoint_name_says_another_attempt() -> None:
    _, err = plain(continued_text(endpoint=None))
    assert err[-1].endswith("— continued on another attempt (attempt 2)")


def test_piped_without_a_footer_the_note_still_shows() -> None:
    out, err = plain(continued_text(), show_footer=False)
    assert out == "The answer is forty-two.\n" and err == [NOTE + ")"]


def test_an_endpoint_name_cannot_reach_the_terminal_as_escapes() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100, color_system="standard")
    sink = RenderSink(console, clock=Ticker())
    for item in continued_text(endpoint="evil\x1b]52;c;ZXZpbA==\x07\x1b[2Jhost"):
        sink.on_next(item)
    sink.on_completed()
    raw = buf.getvalue()
    assert "\x1b]" not in raw and "\x1b[2J" not in raw and "ZXZpbA==" not in raw
    assert "continued on evil" in raw and "host (attempt 2)" in raw


@pytest.mark.anyio
async def test_through_run_the_renderer_gets_the_continuation_live() -> None:
    out, err = io.StringIO(), io.StringIO()
    message = await streamflow.run(ContinuingSource(continued_call()),
                                   RenderSink(Console(file=out), err_file=err))
    assert out.getvalue() == message.text + "\n" == "Let me check.\n"
    assert err.getvalue().splitlines()[0] == NOTE + ", 1 unfinished group(s) asked for again)"


# -- on a terminal -------------------------------------------------------------------------

def test_on_a_terminal_a_continued_sentence_is_drawn_once_and_the_note_is_last() -> None:
    lines = on_terminal(continued_text())
    assert lines[0] == "The answer is forty-two."
    assert sum("The answer is" in line for line in lines) == 1  # no half left behind
    assert lines[1].startswith("primary-model · 30 in · 12 out")
    assert lines[2] == NOTE + ")" and len(lines) == 3


def test_on_a_terminal_a_dropped_call_shows_cut_then_the_note_then_the_call_whole() -> None:
    lines = on_terminal(continued_call())
    assert lines[0] == "Let me check." and sum("Let me check." in x for x in lines) == 1
    cut = next(i for i, line in enumerate(lines) if line.startswith('⚙ get_weather {"city": "Pa"'))
    note = next(i for i, line in enumerate(lines) if line.startswith(NOTE))
    whole = lines.index('⚙ get_weather {"city": "Paris"}')
    assert cut < note < whole
    assert lines[-1].startswith("primary-model") and lines[-1].endswith("tool_call")


def test_on_a_terminal_the_dropped_call_is_marked_incomplete() -> None:
    lines = on_terminal(continued_call())
    assert '⚙ get_weather {"city": "Pa"}  (incomplete)' in lines


# -- on a real pseudo-terminal -------------------------------------------------------------

CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
from continued_stream import {stream}
from streamflow.reactive.sinks.render import RenderSink
sink = RenderSink()  # the console of the terminal it runs on
for item in {stream}():
    sink.on_next(item)
    time.sleep(0.03)
sink.on_completed()
print("plain=%s" % sink.plain)
"""


def run_on_pty(stream: str, columns: int = 100, rows: int = 30) -> list[str]:
    """The lines ``stream`` rendered on a real terminal of that size shows."""
    screen = run_in_pty(["-c", CHILD.format(tests=str(TESTS), stream=stream)], python=True,
                        columns=columns, rows=rows)
    assert screen.code == 0, screen.output.decode(errors="replace")
    return [line for line in screen.lines if line.strip()]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_on_a_real_terminal_a_continued_sentence_stays_one_line() -> None:
    lines = run_on_pty("continued_text")
    assert lines[-1] == "plain=False"  # it drew for a terminal, not a pipe
    assert lines[0] == "The answer is forty-two."
    assert sum("The answer is" in line for line in lines) == 1
    assert lines[1].startswith("primary-model · 30 in · 12 out")
    assert lines[2] == NOTE + ")"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_on_a_real_terminal_a_dropped_call_is_followed_by_the_note_and_the_whole_call(
        ) -> None:
    lines = run_on_pty("continued_call")
    assert lines[-1] == "plain=False"
    assert sum("Let me check." in line for line in lines) == 1
    note = next(i for i, line in enumerate(lines) if line.startswith(NOTE))
    whole = lines.index('⚙ get_weather {"city": "Paris"}')
    assert lines[note - 1].startswith('⚙ get_weather {"city": "Pa"')
    assert note < whole
    assert lines[-2].startswith("primary-model") and lines[-2].endswith("tool_call")
