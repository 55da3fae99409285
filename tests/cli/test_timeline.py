"""``inspect --timeline``: a Recorder file's stream on its time axis (terminal and SVG)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import reactivex.operators as ops
from hypothesis import given
from hypothesis import strategies as st

import streamflow
from streamflow.cli.main import main
from streamflow.cli.timeline_model import StreamTimeline, build_timeline
from streamflow.core.recording import read_recording
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sinks.recorder import Recorder
from streamflow.reactive.sources.replay import ReplaySource, split_body

BUNDLED = Path(streamflow.__file__).parent / "wire" / "recordings"
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
    peak, mean = re.search(r"peak (\d+) · mean (\d+)", shown.stdout).groups()  # type: ignore[union-attr]
    assert int(mean) <= int(peak)  # was peak 485 · mean 13361: the peak over a 0.2 s window


def timeline(fragments: list[tuple[float, int]], tokens: float, duration: float) -> StreamTimeline:
    return StreamTimeline(duration=duration, first_byte=None,
                          first_token=fragments[0][0] if fragments else None, groups=[],
                          stalls=[], fragments=fragments, output_tokens=tokens,
                          tokens_reported=True, chunk_times=[])


@given(st.lists(st.tuples(st.floats(0, 30, allow_subnormal=False), st.integers(1, 500)),
                min_size=1, max_size=60),
       st.floats(0.5, 1e5, allow_subnormal=False), st.floats(0, 10, allow_subnormal=False),
       st.integers(1, 300))
def test_the_mean_rate_is_never_above_the_peak(arrivals: list[tuple[float, int]], tokens: float,
                                              tail: float, columns: int) -> None:
    fragments = sorted(arrivals)
    line = timeline(fragments, tokens, fragments[-1][0] + tail + 1e-3)
    curve = line.rate_curve(columns)
    assert len(curve) == columns and min(curve) >= 0
    mean = line.mean_rate
    first, last = fragments[0][0], fragments[-1][0]
    if last - first <= 0:
        assert mean is None  # content at one instant has no rate
        return
    assert mean is not None
    assert mean <= max(curve) * (1 + 1e-9)
    after_first = tokens * sum(c for t, c in fragments if t > first) / sum(c for _, c in fragments)
    assert mean == pytest.approx(after_first / (last - first))
    step = line.duration / columns
    for column, value in enumerate(curve):  # nothing drawn outside the generation span
        if (column + 1) * step <= first or column * step >= last:
            assert value == 0


def test_a_steady_stream_has_its_mean_as_peak() -> None:
    line = timeline([(1 + i * 0.01, 4) for i in range(101)], 101.0, 3.0)  # 1 token each
    assert line.mean_rate == pytest.approx(100)
    assert max(line.rate_curve(64)) == pytest.approx(100)
    assert line.rate_curve(64)[:21] == [0.0] * 21  # before the first token (1 s of 3 s)
