"""Every file-taking source takes the bundled recordings' names, exactly as the commands do.

``streamflow.demo.resolve_recording`` is the one place that decides: a file of that name
in the current folder wins, else the package's own body, else the path as given (so the
usual ``FileNotFoundError``). The commands' ``resolve_path`` goes through it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import streamflow
from streamflow.cli.bundled import resolve_path
from streamflow.demo import recording, recording_names, resolve_recording
from streamflow.reactive.sources import ReplaySource, from_file
from streamflow.reactive.sources.replay import load_timeline, replay_sync

NAME = "anthropic-turn1.sse"
BUNDLED = recording("anthropic", 1)
LOCAL = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_local",'
         b'"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
         b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
         b'"content_block":{"type":"text","text":""}}\n\n'
         b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
         b'"delta":{"type":"text_delta","text":"the local file"}}\n\n'
         b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
         b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
         b'"end_turn"},"usage":{"output_tokens":3}}\n\n'
         b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current folder that holds no recording, as a user's has."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_bundled_name_resolves_to_its_body(elsewhere: Path) -> None:
    assert NAME in recording_names()
    for name in recording_names():
        dialect, turn = name.removesuffix(".sse").rsplit("-turn", 1)
        assert resolve_recording(name).read_bytes() == recording(dialect, int(turn))
        assert resolve_path(name) == resolve_recording(name)


def test_from_file_takes_a_bundled_name(elsewhere: Path) -> None:
    source = from_file(NAME, chunk_size=50)
    assert source.framing == "sse"
    assert streamflow.run_sync(source).text == streamflow.assemble(BUNDLED).text != ""


def test_replay_sources_take_a_bundled_name(elsewhere: Path) -> None:
    assert ReplaySource(NAME, speed=None).body == BUNDLED
    assert b"".join(chunk for _, chunk in load_timeline(NAME)) == BUNDLED
    assert b"".join(replay_sync(NAME)) == BUNDLED
    assert streamflow.run_sync(ReplaySource(NAME, speed=None)).text == \
        streamflow.assemble(BUNDLED).text


def test_a_file_of_that_name_in_the_current_folder_wins(elsewhere: Path) -> None:
    (elsewhere / NAME).write_bytes(LOCAL)
    assert resolve_recording(NAME) == Path(NAME) == resolve_path(NAME)
    assert streamflow.run_sync(from_file(NAME)).text == "the local file"
    assert ReplaySource(NAME, speed=None).body == LOCAL


def test_a_folder_of_that_name_does_not_hide_the_recording(elsewhere: Path) -> None:
    (elsewhere / NAME).mkdir()  # as the commands: only a file wins
    assert resolve_recording(NAME).read_bytes() == BUNDLED
    assert resolve_path(NAME) == resolve_recording(NAME)


@pytest.mark.parametrize("name", ["no-such-turn.sse", f"sub/{NAME}", f"./{NAME}"])
def test_any_other_path_is_left_as_given(elsewhere: Path, name: str) -> None:
    assert resolve_recording(name) == Path(name)
    assert resolve_path(name) is None
    with pytest.raises(FileNotFoundError):
        streamflow.run_sync(from_file(name))
    with pytest.raises(FileNotFoundError):
        ReplaySource(name)
