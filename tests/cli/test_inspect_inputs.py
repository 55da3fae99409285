"""What ``inspect`` and ``replay`` accept: Recorder files, and a clear no for non-streams."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
import reactivex.operators as ops

import streamflow
from streamflow.cli.main import main
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sinks.recorder import Recorder
from streamflow.reactive.sources.replay import ReplaySource

DATA = Path(__file__).resolve().parents[1] / "data"
BUNDLED = Path(streamflow.__file__).parent / "wire" / "recordings" / "anthropic-turn1.sse"
README = Path(__file__).resolve().parents[2] / "README.md"


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "turn.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic", meta={"test": True})
    streamflow.run_sync(rec.tap(ReplaySource(BUNDLED, speed=None)), rec)
    return path


def test_inspect_reads_the_recorders_own_file(capsys: pytest.CaptureFixture[str],
                                              recorded: Path) -> None:
    code, out, err = cli(capsys, "inspect", recorded)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[2].startswith("dialect   anthropic") and lines[3] == "status    complete"
    assert lines[4].startswith("recorded  completed after ") and "chunks" in lines[4]
    assert "get_weather" in out
    code, out, _ = cli(capsys, "inspect", recorded, "--json")
    assert code == 0 and json.loads(out)["items"][-1]["name"] == "get_weather"


def test_inspect_says_how_a_cut_recording_ended(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    path = tmp_path / "cut.sfrec.jsonl"
    rec = Recorder(path, dialect="anthropic")
    with pytest.raises(streamflow.CancelledStreamError):
        streamflow.run_sync(rec.tap(ReplaySource(BUNDLED, speed=None)).pipe(
            pipeline("anthropic"), ops.take(4)), rec)
    code, out, err = cli(capsys, "inspect", path)
    assert code == 1 and "recorded  cancelled after" in out
    assert "IncompleteStreamError" in err


def test_a_broken_recording_line_exits_2(capsys: pytest.CaptureFixture[str],
                                         recorded: Path) -> None:
    recorded.write_text(recorded.read_text() + '{"t": NaN, "chunk": ""}\n')
    code, out, err = cli(capsys, "inspect", recorded)
    assert code == 2 and out == "" and "not a finite number" in err


@pytest.mark.parametrize("command", ["inspect", "replay"])
@pytest.mark.parametrize("kind", ["readme", "binary", "json", "empty"])
def test_a_file_that_is_no_stream_says_so_and_exits_2(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, kind: str) -> None:
    path = {"readme": README, "binary": tmp_path / "blob.bin", "json": tmp_path / "x.json",
            "empty": tmp_path / "empty.sse"}[kind]
    if kind == "binary":
        path.write_bytes(bytes(range(256)) * 8)
    elif kind == "json":
        path.write_text('{"hello": "world"}\n')
    elif kind == "empty":
        path.write_bytes(b"")
    extra = ["--speed", "0", "--plain"] if command == "replay" else []
    code, out, err = cli(capsys, command, path, *extra)
    assert code == 2 and out == ""
    assert f"{path} is not a stream of any known dialect" in err
    assert "tried: anthropic, openai-responses" in err and "(NDJSON)" in err
    assert "--dialect" in err
    assert "partial" not in err and "retryable" not in err and "complete-last-event" not in err


def test_a_stream_that_failed_is_still_a_failed_stream(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    body = BUNDLED.read_bytes()
    path = tmp_path / "cut.sse"
    path.write_bytes(body[: len(body) // 2])
    code, out, err = cli(capsys, "inspect", path)
    assert code == 1 and "partial (the stream failed)" in out
    assert "not a stream" not in err


def test_stdin_garbage_is_no_stream(capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"hello\nworld\n\n")))
    code, _, err = cli(capsys, "inspect", "-")
    assert code == 2 and "- is not a stream of any known dialect" in err


@pytest.mark.parametrize("command", ["inspect", "replay", "convert"])
def test_a_directory_or_a_pipe_is_named_as_what_it_is(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    extra = {"replay": ["--speed", "0", "--plain"], "convert": ["--to", "uni"]}.get(command, [])
    code, out, err = cli(capsys, command, tmp_path, *extra)
    assert code == 2 and out == ""
    assert f"cannot read {tmp_path}: it is a directory" in err and "no such file" not in err
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = cli(capsys, command, fifo, *extra)
    assert code == 2 and "not a regular file" in err and "give -" in err
    code, _, err = cli(capsys, command, tmp_path / "missing.sse", *extra)
    assert code == 2 and "no such file or bundled recording" in err
