"""``inspect --timeline``: a Recorder file's stream on its time axis (terminal and SVG)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import reactivex.operators as ops

import streamflow
from streamflow.cli.main import main
from streamflow.cli.timeline_model import build_timeline
from streamflow.operators import pipeline
from streamflow.recording import read_recording
from streamflow.sinks.recorder import Recorder
from streamflow.sources.replay import ReplaySource, split_body

BUNDLED = Path(streamflow.__file__).parent / "demo" / "recordings"
TURN1 = split_body((BUNDLED / "anthropic-turn1.sse").read_bytes())  # thinking, text, tool


class Clock:
    """The Recorder's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(path: Path, gaps: dict[int, float], step: float = 0.05,
           pieces: list[bytes] = TURN1) -> Path:
    """A Recorder file of ``pieces``, ``step`` apart, with extra ``gaps`` before some."""
    clock = Clock()
    with Recorder(path, dialect="anthropic", clock=clock) as rec:
        clock.now = 0.4  # the wait for the first byte
        for index, piece in enumerate(pieces):
            clock.now += gaps.get(index, 0.0)
            rec.record_chunk(piece)
            clock.now += step
    return path


def test_the_model_of_a_recorded_turn(tmp_path: Path) -> None:
    line = build_timeline(read_recording(record(tmp_path / "a.sfrec.jsonl", {12: 1.2})))
    kinds = [(g.kind, g.label) for g in line.groups]
    assert kinds == [("thinking", "thinking"), ("text", "text"), ("tool_call", "get_weather")]
    assert line.first_byte == pytest.approx(0.4)
    thinking, text, tool = line.groups
    assert line.first_token == thinking.start and thinking.end <= text.start <= tool.start
    assert [(round(s.start, 2), round(s.seconds, 2)) for s in line.stalls] == [(0.95, 1.25)]
    assert line.tokens_reported and line.output_tokens == 131
    assert sum(chars for _, chars in line.fragments) >= thinking.chars + text.chars + tool.chars
    assert line.tokens_between(0, line.duration + 1) == pytest.approx(131)
    assert line.ended == "completed" and line.finish_reason == "tool_call"
    curve = line.rate_curve(50)
    assert len(curve) == 50 and max(curve) > 0 and curve[0] == 0  # nothing before the bytes


def test_inspect_timeline_draws_every_row(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "110")
    path = record(tmp_path / "b.sfrec.jsonl", {12: 1.2})
    assert main(["inspect", "--timeline", str(path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split("  ")[0]: line for line in out.splitlines() if line and line[0] != " "}
    assert {"request", "thinking", "text", "⚙ get_weather", "stalls", "chunks",
            "tokens/s"} <= set(rows)
    assert "first byte 0.40s · first token" in rows["request"]
    assert "1 gap > 0.5s · longest 1.25s at 0.95s" in rows["stalls"]
    assert "█" in rows["thinking"] and "▒" in rows["thinking"]  # silent while it stalled
    assert "peak " in rows["tokens/s"] and "131 output tokens" in out
    assert max(len(line) for line in out.splitlines()) <= 110


def test_svg_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = record(tmp_path / "c.sfrec.jsonl", {})
    svg = tmp_path / "out.svg"
    assert main(["inspect", str(path), "--timeline-svg", str(svg)]) == 0
    text = svg.read_text()
    assert text.startswith("<svg") and "get_weather" in text and "tokens/s" in text


def test_a_file_written_by_run_with_a_tap_works(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    streamflow.run_sync(rec.tap(ReplaySource(BUNDLED / "anthropic-turn2.sse", speed=None)), rec)
    assert main(["inspect", "--timeline", str(path)]) == 0
    out = capsys.readouterr().out
    assert "text" in out and "97 output tokens" in out and "ended: completed" in out


def test_a_cut_stream_is_drawn_up_to_its_end(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    with pytest.raises(streamflow.CancelledStreamError):
        streamflow.run_sync(rec.tap(ReplaySource(BUNDLED / "anthropic-turn1.sse", speed=None))
                            .pipe(pipeline("anthropic"), ops.take(8)), rec)
    assert main(["inspect", "--timeline", str(path)]) == 1
    out = capsys.readouterr().out
    assert "ended: cancelled" in out and "IncompleteStreamError" in out
    assert "≈" in out  # no usage arrived: tokens estimated, and said so


def test_a_raw_body_has_no_times(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--timeline", str(BUNDLED / "anthropic-turn1.sse")]) == 2
    assert "--timeline needs a Recorder file" in capsys.readouterr().err


def test_the_demo_records_files_the_timeline_draws(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    done = subprocess.run([sys.executable, "-m", "streamflow", "demo", "--fast", "--record",
                           str(folder)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["turn1.sfrec.jsonl",
                                                        "turn2.sfrec.jsonl"]
    recording = read_recording(folder / "turn1.sfrec.jsonl")
    assert recording.end is not None and recording.end["end"] == "completed"
    assert recording.meta["turn"] == 1 and recording.meta["url"].endswith("/v1/messages")
    shown = subprocess.run([sys.executable, "-m", "streamflow", "inspect", "--timeline",
                            str(folder / "turn1.sfrec.jsonl")], capture_output=True,
                           text=True, timeout=60, check=False)
    assert shown.returncode == 0 and "⚙ get_weather" in shown.stdout
