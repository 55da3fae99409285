"""The Recorder over an answer a failover chain continued: every event as it came, and a
restart line that names what the continuation dropped and where it went on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from continued_stream import CUT_ARGS, ERROR, ContinuingSource, continued_call, continued_text

import streamflow
from streamflow.core.message import Assembler
from streamflow.core.outcome import StreamRestart
from streamflow.reactive.sinks.recorder import Recorder, read_recording
from streamflow.reactive.sources import from_iterable


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.anyio
async def test_a_continuations_restart_line_names_groups_discard_and_endpoint(
        tmp_path: Path) -> None:
    path = tmp_path / "continued.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    await streamflow.run(ContinuingSource(continued_call()), rec)
    lines = lines_of(path)
    (restart,) = [line for line in lines if "restart" in line]
    assert {k: v for k, v in restart.items() if k != "t"} == {
        "restart": 2, "groups": 1, "discard": 2, "endpoint": "backup"}
    assert rec.attempts == 2
    # every event as it came, the dropped fragments included, the restart line in place
    kinds = [("restart" if "restart" in line else line["event"]["event_type"]
              if "event" in line else None) for line in lines[1:-1]]
    assert kinds == ["delta"] * 5 + ["restart"] + ["delta"] * 3 + ["stop"]
    before = [line["event"] for line in lines[1:6]]
    assert before[-1]["content_items"][0]["arguments"] == CUT_ARGS
    assert lines[-1]["end"] == "completed"


def test_a_continuation_that_drops_nothing_writes_zero_groups(tmp_path: Path) -> None:
    path = tmp_path / "text.sfrec.jsonl"
    rec = Recorder(path)
    for item in continued_text():
        rec.on_next(item)
    rec.on_completed()
    (restart,) = [line for line in lines_of(path) if "restart" in line]
    assert (restart["groups"], restart["discard"], restart["endpoint"]) == (0, 0, "backup")


def test_a_tapped_recorder_still_writes_a_continuations_line(tmp_path: Path) -> None:
    """A tap writes the restart line of a retry (a new subscription); a continuation is
    no new subscription of the tap, so the notice writes it."""
    path = tmp_path / "tapped.sfrec.jsonl"
    rec = Recorder(path)
    rec.tap(from_iterable([b"x"]))
    rec.on_next(StreamRestart(ERROR, 2, 3, 0.0))  # a retry: the tap's to write
    rec.on_next(StreamRestart(ERROR, 3, 2, 0.0, groups=1, endpoint="third"))
    rec.close()
    restarts = [line for line in lines_of(path) if "restart" in line]
    assert [(r["restart"], r.get("endpoint")) for r in restarts] == [(3, "third")]


@pytest.mark.anyio
async def test_a_continued_answer_reads_back_as_the_answer(tmp_path: Path) -> None:
    path = tmp_path / "readback.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    message = await streamflow.run(ContinuingSource(continued_call()), rec)
    recording = read_recording(path)
    assembler = Assembler()
    for _, event in recording.events:
        assembler.feed(event)
    assert assembler.message.text == message.text == "Let me check."
    assert assembler.message.tool_calls == message.tool_calls
