"""The terminal layout as a user sees it in a real pty, at 80 and 120 columns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from terminal import run_in_pty

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


def anthropic_body(pieces: list[str]) -> bytes:
    """An Anthropic SSE body streaming ``pieces`` as one text block."""
    def event(name: str, data: dict[str, object]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    out = [event("message_start", {"type": "message_start", "message": {
        "id": "msg_poem", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}})]
    out += [event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": piece}})
            for piece in pieces]
    out += [event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            event("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
            event("message_stop", {"type": "message_stop"})]
    return "".join(out).encode()


@pytest.mark.parametrize("columns", [80, 120])
def test_single_newlines_stay_line_breaks(tmp_path: Path, columns: int) -> None:
    body = tmp_path / "poem.sse"
    body.write_bytes(anthropic_body(["Count:\n1\n2", "\n3\n", "4\n5\n\n", "Roses are red,\n",
                                     "violets are *blue*.\n\nDone."]))
    screen = run_in_pty(["replay", str(body), "--speed", "0"], columns=columns)
    assert screen.code == 0
    lines = [line for line in screen.lines if line]
    start = lines.index("Count:")
    assert lines[start:start + 9] == ["Count:", "1", "2", "3", "4", "5", "Roses are red,",
                                      "violets are blue.", "Done."]


@pytest.mark.parametrize("columns", [80, 120])
def test_demo_lines_fit_the_width_and_show_meaningful_figures(columns: int) -> None:
    screen = run_in_pty(["demo", "--fast"], columns=columns)
    assert screen.code == 0, screen.text
    results = [line for line in screen.lines if line.startswith("✓ get_weather → ")]
    assert len(results) == 1 and results[0].endswith("…")  # one line, cut to the width
    assert len(results[0]) == columns
    footers = [line for line in screen.lines if " in · " in line and " out" in line]
    assert len(footers) == 2, screen.text
    assert footers[0].endswith("· tool_call") and footers[1].endswith("· stop")  # not wrapped
    assert all("tok/s" not in line for line in footers)  # --fast: no rate worth printing
    assert all("unknown model" not in line for line in screen.lines)


def test_interrupt_before_the_first_event_prints_no_unknown_model() -> None:
    screen = run_in_pty(["demo"], interrupt_when=b"jacket this evening", delay=0.05)
    assert screen.code == 130
    assert "⏹ interrupted before the answer began" in screen.text
    assert "unknown model" not in screen.text and "partial answer above" not in screen.text


def test_hostile_text_never_reaches_the_terminal(tmp_path: Path) -> None:
    body = tmp_path / "hostile.sse"
    body.write_bytes(anthropic_body(["safe \x1b[2J\x1b]0;title\x07\x1b]52;c;eA==\x07",
                                     "\x9b2J\u202eevil\x1bc\x08\r end"]))
    screen = run_in_pty(["replay", str(body), "--speed", "0"], columns=80)
    assert screen.code == 0
    assert any(line.startswith("safe evil end") for line in screen.lines), screen.text
    assert b"\x1b]0;" not in screen.output and b"\x1b]52" not in screen.output
    assert b"\x1bc" not in screen.output and "\u202e".encode() not in screen.output
