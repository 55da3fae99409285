"""Record a stream once, replay it deterministically: same events, same (scaled) pacing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import reactivex
from hypothesis import given
from hypothesis import strategies as st
from realdata import DATA, real_body

import streamflow
from streamflow.app.runtime import run, run_sync
from streamflow.core.errors import IncompleteStreamError
from streamflow.core.events import UniEvent
from streamflow.reactive.operators.on_error import StreamRestart
from streamflow.reactive.sinks.recorder import Recorder, Recording, is_recording, read_recording
from streamflow.reactive.sources import from_async_iterable, from_iterable
from streamflow.reactive.sources.replay import (
    ReplaySource,
    load_timeline,
    replay_async,
    replay_sync,
    split_body,
)

BODY = (DATA / "sinks" / "tool_turn.sse").read_bytes()  # thinking-free text + a tool call
CHUNKS = [BODY[i:i + 97] for i in range(0, len(BODY), 97)]  # cuts lines, JSON, events


class Schedule:
    """A clock that returns the given times in turn (then stays at the last)."""

    def __init__(self, times: list[float]) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0) if len(self.times) > 1 else self.times[0]


class FakeTime:
    """An injectable clock + sleep: sleeping advances the clock, nothing waits."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await anyio.lowlevel.checkpoint()

    def sleep_sync(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def without_time(events: list[UniEvent]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        data = event.to_dict()
        data.pop("created_at")
        out.append(data)
    return out


def record(tmp_path: Path) -> Path:
    """Record BODY (fed synchronously) into a file; returns its path."""
    path = tmp_path / "turn.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic", meta={"prompt": "weather?"})
    run_sync(rec.tap(from_iterable(CHUNKS)), rec, dialect="anthropic")
    return path


def test_recording_file_format(tmp_path: Path) -> None:
    path = record(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header = lines[0]
    assert header["streamflow_recording"] == 1 and header["dialect"] == "anthropic"
    assert header["meta"] == {"prompt": "weather?"} and "created" in header
    kinds = [next(k for k in ("chunk", "event", "end") if k in line) for line in lines[1:]]
    assert kinds[0] == "chunk" and "event" in kinds and kinds[-1] == "end"  # bytes, then events
    times = [line["t"] for line in lines[1:]]
    assert times == sorted(times) and times[0] >= 0
    assert lines[-1]["end"] == "completed"
    assert is_recording(path)
    recording = read_recording(path)
    assert recording.body == BODY  # every byte, in order
    assert [e.event_type for _, e in recording.events][-1] == "stop"


@pytest.mark.anyio
async def test_replay_gives_the_recorded_events(tmp_path: Path) -> None:
    path = tmp_path / "live.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")

    async def arrive() -> Any:
        for chunk in CHUNKS:
            await anyio.sleep(0)
            yield chunk

    original = await run(rec.tap(from_async_iterable(arrive)), rec, dialect="anthropic")
    recording = read_recording(path)

    replayed: list[UniEvent] = []
    source = ReplaySource(path, speed=None)
    assert source.dialect == "anthropic"
    message = await run(source, replayed.append, dialect=source.dialect or "auto")
    assert without_time(replayed) == without_time([e for _, e in recording.events])
    assert message.to_dict() | {"created_at": 0} == original.to_dict() | {"created_at": 0}
    assert message.tool_calls[0].arguments == {"city": "Paris"}


def test_replay_without_an_event_loop(tmp_path: Path) -> None:
    recording = read_recording(record(tmp_path))
    decoder = streamflow.StreamDecoder("anthropic")
    events = [e for chunk in replay_sync(recording) for e in decoder.feed(chunk)]
    events += decoder.close()
    assert without_time(events) == without_time([e for _, e in recording.events])


def test_arrival_times_are_recorded_from_the_clock() -> None:
    buf = io.StringIO()
    rec = Recorder(buf, clock=Schedule([10.0, 10.5, 11.25, 12.0]))
    rec.record_chunk(b"a")
    rec.record_chunk(b"b")
    rec.close()
    recording = read_recording(buf.getvalue().splitlines())
    assert recording.chunks == [(0.5, b"a"), (1.25, b"b")]
    assert recording.delays() == [0.5, 0.75]
    assert recording.end is not None and recording.end["t"] == 2.0


@pytest.mark.anyio
@pytest.mark.parametrize("speed", [1.0, 2.0, 0.5])
async def test_replay_keeps_relative_gaps_scaled_by_speed(speed: float) -> None:
    timeline = [(0.0, b"a"), (0.5, b"b"), (0.5, b"c"), (2.0, b"d")]
    fake = FakeTime()
    got = [c async for c in replay_async(timeline, speed=speed, sleep=fake.sleep,
                                         clock=fake.clock)]
    assert got == [b"a", b"b", b"c", b"d"]
    assert fake.sleeps == pytest.approx([0.5 / speed, 1.5 / speed])  # no sleep for 0 gaps
    assert fake.now - 100.0 == pytest.approx(2.0 / speed)


@pytest.mark.anyio
async def test_schedule_absorbs_slow_consumers() -> None:
    """Chunk i is due at t_i/speed after the start: time spent elsewhere is not added."""
    fake = FakeTime()
    got = []
    async for chunk in replay_async([(0.0, b"a"), (1.0, b"b"), (2.0, b"c")], speed=1.0,
                                    sleep=fake.sleep, clock=fake.clock):
        got.append(chunk)
        fake.now += 0.25  # the consumer takes a quarter second per chunk
    assert got == [b"a", b"b", b"c"]
    assert fake.sleeps == pytest.approx([0.75, 0.75])


@pytest.mark.anyio
async def test_as_fast_as_possible_still_yields_to_the_loop() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    timeline = [(float(i), b"x") for i in range(50)]
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        got = [c async for c in replay_async(timeline, speed=None)]
        tg.cancel_scope.cancel()
    assert len(got) == 50 and ticks >= 10


def test_replay_sync_sleeps_by_speed() -> None:
    fake = FakeTime()
    chunks = list(replay_sync([(0.0, b"a"), (1.0, b"b")], speed=4.0, sleep=fake.sleep_sync,
                              clock=fake.clock))
    assert chunks == [b"a", b"b"] and fake.sleeps == [0.25]


def test_raw_bodies_are_split_like_a_server_sends_them(tmp_path: Path) -> None:
    sse = split_body(BODY)
    assert len(sse) == 11 and all(piece.endswith(b"\n\n") for piece in sse)
    assert b"".join(sse) == BODY
    lines = b'{"a": 1}\n{"b": 2}\n'
    assert split_body(lines, "jsonl") == [b'{"a": 1}\n', b'{"b": 2}\n']
    path = tmp_path / "body.sse"
    path.write_bytes(BODY)
    timeline = load_timeline(path, interval=0.1)
    assert [t for t, _ in timeline][:3] == pytest.approx([0.0, 0.1, 0.2])
    message = run_sync(ReplaySource(path, speed=None), dialect="anthropic")
    assert message.text == "Let me check."


@pytest.mark.anyio
async def test_raw_real_recording_replays(tmp_path: Path) -> None:
    path = tmp_path / "basic.sse"
    path.write_bytes(real_body("anthropic/sdk_basic_response.sse"))
    expected = streamflow.assemble(path.read_bytes(), "anthropic")
    message = await run(ReplaySource(path, speed=None), dialect="anthropic")
    assert message.to_dict() | {"created_at": 0} == expected.to_dict() | {"created_at": 0}


def test_a_cut_stream_records_the_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    with pytest.raises(IncompleteStreamError):
        run_sync(rec.tap(from_iterable(CHUNKS[:5])), rec, dialect="anthropic")
    recording = read_recording(path)
    assert recording.end is not None and recording.end["end"] == "error"
    assert recording.end["error"]["type"] == "IncompleteStreamError"
    assert recording.body == b"".join(CHUNKS[:5])


def test_a_retry_restarts_the_recording(tmp_path: Path) -> None:
    """Each re-subscription of a tapped source is a new attempt; readers keep the last."""
    path = tmp_path / "retry.sfrec.jsonl"
    rec = Recorder(path)
    tapped = rec.tap(from_iterable(lambda: iter(CHUNKS)))
    tapped.subscribe(lambda chunk: None)  # attempt 1
    rec.on_next(StreamRestart(error=IncompleteStreamError("cut"), attempt=2, discard=3,
                              delay=0.0))  # a tap already marks attempts: ignored
    tapped.subscribe(lambda chunk: None)  # attempt 2
    rec.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["restart"] for line in lines if "restart" in line] == [2]
    recording = read_recording(path)
    assert recording.attempts == 2 and recording.body == BODY


def test_tap_on_a_plain_observable(tmp_path: Path) -> None:
    buf = io.StringIO()
    rec = Recorder(buf)
    seen: list[bytes] = []
    rec.tap(reactivex.from_iterable([b"x", b"y"])).subscribe(seen.append)
    rec.close()
    assert seen == [b"x", b"y"]
    assert read_recording(buf.getvalue().splitlines()).body == b"xy"


@pytest.mark.parametrize("text, reason", [
    ("", "empty"),
    ('{"hello": 1}\n', "header"),
    ('{"streamflow_recording": 9}\n', "newer"),
    ('{"streamflow_recording": 1}\n{"t": 0, "chunk": "***"}\n', "line 2"),
    ('{"streamflow_recording": 1}\nnot json\n', "line 2"),
])
def test_bad_recordings_are_refused_clearly(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        read_recording(text.splitlines())


def test_recording_object_replays_directly() -> None:
    recording = Recording(header={"streamflow_recording": 1, "dialect": "anthropic"},
                          chunks=[(0.0, c) for c in CHUNKS])
    source = ReplaySource(recording, speed=None)
    assert source.dialect == "anthropic" and source.body == BODY
    assert run_sync(source, dialect="anthropic").text == "Let me check."


@given(st.binary(max_size=300), st.sampled_from(["sse", "jsonl", "bin"]))
def test_split_body_never_loses_or_reorders_bytes(body: bytes, kind: str) -> None:
    assert b"".join(split_body(body, kind)) == body


def test_binary_event_stream_replays_message_by_message(tmp_path: Path) -> None:
    path = tmp_path / "converse.bin"
    path.write_bytes(real_body("bedrock/pyd_bedrock_converse_stream.bin"))
    source = ReplaySource(path, speed=None)
    pieces = [chunk for _, chunk in source.timeline]
    assert all(int.from_bytes(p[:4], "big") == len(p) for p in pieces)  # one message each
    expected = streamflow.assemble(path.read_bytes(), "bedrock")
    assert run_sync(source, dialect="bedrock").text == expected.text != ""
