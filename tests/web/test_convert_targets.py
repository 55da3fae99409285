"""``streamflow convert FILE --to vercel-ui|ag-ui`` writes what the encoders write."""

from __future__ import annotations

from pathlib import Path

from realdata import DATA

import streamflow
from streamflow.cli.main import main
from streamflow.wire.decoder import StreamDecoder

TURN = DATA / "cli" / "anthropic_tool_turn.sse"


def test_convert_to_the_ui_targets(tmp_path: Path) -> None:
    events = StreamDecoder().feed(TURN.read_bytes())
    out = tmp_path / "ui.sse"
    assert main(["convert", str(TURN), "--to", "vercel-ui", "-o", str(out)]) == 0
    assert out.read_bytes() == b"".join(streamflow.encode(events, "vercel-ui"))
    flags = ["--option", "thread_id=t", "--option", "run_id=r", "--option", "message_id=m"]
    assert main(["convert", str(TURN), "--to", "ag-ui", *flags, "-o", str(out)]) == 0
    assert out.read_bytes() == b"".join(streamflow.encode(
        events, "ag-ui", thread_id="t", run_id="r", message_id="m"))
