"""Hostile recording times never hang a replay: huge, negative, NaN (asyncio and trio)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
from realdata import DATA

import streamflow
from streamflow import Limits, StreamTimeoutError
from streamflow.core.recording import read_recording
from streamflow.reactive.sources.replay import ReplaySource, replay_sync, schedule

BODY = (DATA / "sinks" / "tool_turn.sse").read_bytes()
EVENTS = BODY.split(b"\n\n")


def recording(tmp_path: Path, times: list[object]) -> Path:
    """A Recorder-format file whose chunks (one SSE event each) carry ``times`` verbatim."""
    lines = [json.dumps({"streamflow_recording": 1, "dialect": "anthropic", "framing": None,
                         "created": "2026-01-01T00:00:00+00:00", "meta": {}})]
    pieces = [e + b"\n\n" for e in EVENTS if e.strip()]
    for t, piece in zip(times, pieces, strict=False):
        chunk = base64.b64encode(piece).decode()
        lines.append(f'{{"t": {t}, "chunk": "{chunk}"}}')
    for piece in pieces[len(times):]:
        lines.append(json.dumps({"t": 0.01, "chunk": base64.b64encode(piece).decode()}))
    path = tmp_path / "hostile.sfrec.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.anyio
async def test_an_absurd_pause_ends_in_a_timeout_with_the_partial_not_a_hang(
        tmp_path: Path) -> None:
    path = recording(tmp_path, [0.0, 0.0, 0.0, "1e308"])
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        await streamflow.run(ReplaySource(path))
    assert time.monotonic() - started < 2
    error = caught.value
    assert error.kind == "idle" and error.seconds == 600.0
    assert "the recording pauses 1e+308s before chunk 3" in error.message
    assert error.partial is not None and error.partial.id  # message_start made it


@pytest.mark.anyio
async def test_pauses_are_bounded_by_the_idle_limit_in_effect(tmp_path: Path) -> None:
    path = recording(tmp_path, [0.0, 30.0])
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        await streamflow.run(ReplaySource(path), limits=Limits(idle_timeout=0.5))
    assert time.monotonic() - started < 2 and caught.value.seconds == 0.5
    with pytest.raises(StreamTimeoutError):  # the source's own limits too
        await streamflow.run(ReplaySource(path, limits=Limits(idle_timeout=0.5)))
    message = await streamflow.run(ReplaySource(path, speed=None))  # as fast as possible
    assert message.complete


@pytest.mark.anyio
async def test_times_going_backwards_are_no_pause(tmp_path: Path) -> None:
    path = recording(tmp_path, [5.0, -1e300, "-5", 0.0])
    timeline = read_recording(path).chunks
    dues = schedule(timeline, speed=1.0, max_pause=None)
    assert dues[:4] == [5.0, 5.0, 5.0, 5.0]
    started = time.monotonic()
    message = await streamflow.run(ReplaySource(path, speed=100.0))
    assert message.complete and time.monotonic() - started < 2


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_time_that_is_no_number_is_a_value_error_naming_the_line(tmp_path: Path,
                                                                     bad: str) -> None:
    path = recording(tmp_path, [0.0, bad])
    with pytest.raises(ValueError, match=r"recording line 3: time .* is not a finite number"):
        ReplaySource(path)
    with pytest.raises(ValueError, match="not a finite number"):
        list(replay_sync([(0.0, b"a"), (float(bad.replace("1e999", "inf")), b"b")]))


@pytest.mark.parametrize("speed", [-1.0, float("nan")])
def test_a_bad_speed_is_refused(tmp_path: Path, speed: float) -> None:
    with pytest.raises(ValueError, match="speed"):
        ReplaySource(recording(tmp_path, [0.0]), speed=speed)


def test_sync_replay_is_bounded_too(tmp_path: Path) -> None:
    path = recording(tmp_path, [0.0, "1e308"])
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        streamflow.run_sync(ReplaySource(path))
    assert time.monotonic() - started < 2 and caught.value.partial is not None
