"""Structured output in the browser: the partial object as the real clients see it.

The vercel-ui encoder writes it as one ``data-output`` part replaced in place (same id),
read by the real ``ai`` package's ``uiMessageChunkSchema`` and ``readUIMessageStream`` at
major 5 (``ai``) and the current major (``ai-latest``); the ag-ui encoder as the run's
state ``{"output": ...}`` (``STATE_SNAPSHOT`` then ``STATE_DELTA`` JSON Patches), applied by
``@ag-ui/client``'s own agent. Both must grow the object and end on the validated one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamflow.core.structured.snapshots import _covers
from streamflow.wire.dialects import get_encoder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "structured"))
import itertools

from test_stream_output import ANSWER, WEATHER, Weather, text_events

pytest.importorskip("ag_ui", reason="the web extra (ag-ui-protocol) is not installed")


def _bodies(answer: str) -> dict[str, str]:
    events = text_events(answer)
    out = {}
    for target in ("vercel-ui", "ag-ui"):
        encoder = get_encoder(target)(output=Weather)
        out["vercel" if target == "vercel-ui" else "agui"] = b"".join(
            encoder.feed(e) for e in events).decode()
    return out


def _read(node_clients: Path, tmp_path: Path, bodies: dict[str, str], ai: str) -> Any:
    file = tmp_path / "bodies.json"
    file.write_text(json.dumps(bodies))
    done = subprocess.run([shutil.which("node") or "node", "output.mjs", str(file), ai],
                          cwd=node_clients, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _growing(values: list[Any]) -> None:
    for before, after in itertools.pairwise(values):
        assert _covers(after, before), (before, after)


@pytest.mark.parametrize("ai", ["ai", "ai-latest"])
def test_the_ai_sdk_folds_one_data_part_that_grows_to_the_final_object(
        node_clients: Path, tmp_path: Path, ai: str) -> None:
    seen = _read(node_clients, tmp_path, _bodies(ANSWER), ai)["vercel"]
    assert seen["schemaErrors"] == [] and seen["streamErrors"] == []
    snapshots = seen["snapshots"]
    assert all(s["count"] <= 1 for s in snapshots)  # replaced in place, never appended
    datas = [s["data"] for s in snapshots if s["data"] is not None]
    assert len(datas) > 10
    _growing(datas)
    assert datas[-1] == json.loads(WEATHER.model_dump_json())


def test_the_ag_ui_client_applies_a_snapshot_then_patches(node_clients: Path,
                                                          tmp_path: Path) -> None:
    seen = _read(node_clients, tmp_path, _bodies(ANSWER), "ai")["agui"]
    assert seen["schemaErrors"] == [] and seen["error"] is None
    outputs = [state["output"] for state in seen["states"]]
    assert len(outputs) > 10
    _growing(outputs)
    assert seen["final"] == {"output": json.loads(WEATHER.model_dump_json())}


def test_an_output_that_does_not_validate_ends_the_run_with_the_error(
        node_clients: Path, tmp_path: Path) -> None:
    wrong = ANSWER.replace('"cloudy"', '"foggy"')
    bodies = _bodies(wrong)
    assert '"type":"error"' in bodies["vercel"] and '"finish"' not in bodies["vercel"]
    assert "RUN_ERROR" in bodies["agui"] and "RUN_FINISHED" not in bodies["agui"]
    seen = _read(node_clients, tmp_path, bodies, "ai-latest")
    assert seen["vercel"]["schemaErrors"] == []
    assert seen["agui"]["schemaErrors"] == []
