"""The Recorder's end line says how the stream really ended (asyncio and trio)."""

from __future__ import annotations

import anyio
import pytest
import reactivex.operators as ops
from realdata import DATA

import streamflow
from streamflow import CancelledStreamError, Limits, StreamTimeoutError
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sinks.recorder import Recorder, read_recording
from streamflow.reactive.sources import scope
from streamflow.reactive.sources.replay import ReplaySource, split_body

pytestmark = pytest.mark.anyio
BODY = (DATA / "sinks" / "tool_turn.sse").read_bytes()
TIMELINE = [(i * 0.01, piece) for i, piece in enumerate(split_body(BODY))]


def source(**kwargs: object) -> ReplaySource:
    from streamflow.core.recording import Recording

    return ReplaySource(Recording(header={"dialect": "anthropic"}, chunks=TIMELINE),
                        **kwargs)  # type: ignore[arg-type]


async def test_a_full_stream_ends_completed(tmp_path: object) -> None:
    path = f"{tmp_path}/ok.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    await streamflow.run(rec.tap(source(speed=None)), rec)
    assert read_recording(path).end == {"t": pytest.approx(0, abs=5), "end": "completed"}


async def test_take_n_ends_cancelled_as_run_reports_it(tmp_path: object) -> None:
    path = f"{tmp_path}/take.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    with pytest.raises(CancelledStreamError):
        await streamflow.run(rec.tap(source(speed=None)).pipe(pipeline("anthropic"),
                                                               ops.take(3)), rec)
    end = read_recording(path).end
    assert end is not None and end["end"] == "cancelled" and "stop event" in end["reason"]


async def test_a_dispose_from_outside_ends_cancelled(tmp_path: object) -> None:
    path = f"{tmp_path}/dispose.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    got: list[object] = []
    async with scope():
        subscription = rec.tap(source(speed=1.0)).pipe(pipeline("anthropic")).subscribe(
            on_next=got.append, on_error=rec.on_error, on_completed=rec.on_completed)
        while len(got) < 2:
            await anyio.sleep(0.005)
        subscription.dispose()
    rec.close()
    recording = read_recording(path)
    assert recording.end is not None and recording.end["end"] == "cancelled"
    assert 0 < len(recording.chunks) < len(TIMELINE)


async def test_a_dispose_from_inside_ends_cancelled_at_once(tmp_path: object) -> None:
    path = f"{tmp_path}/inside.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    async with scope():
        rec.tap(source(speed=None)).pipe(ops.take(2)).subscribe(lambda _: None)
    assert rec.closed and read_recording(path).end["end"] == "cancelled"  # type: ignore[index]


async def test_a_timeout_ends_error(tmp_path: object) -> None:
    path = f"{tmp_path}/slow.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    with pytest.raises(StreamTimeoutError):
        await streamflow.run(rec.tap(source(speed=0.01)), rec, limits=Limits(deadline=0.2))
    end = read_recording(path).end
    assert end is not None and end["end"] == "error"
    assert end["error"]["type"] == "StreamTimeoutError"
