"""The parts of an Agent run past the model's stream, read by the real clients.

Tool input streaming, progress as preliminary output, the final output, an error
output and an approval request, written by the ``vercel-ui`` encoder for the AI SDK
v5 (``ai``) and for the current major (``ai-latest``, ``ai_sdk=6``), and by the
``ag-ui`` encoder for ``@ag-ui/core`` / ``@ag-ui/client``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from streamflow.app.tools import ToolResult
from streamflow.core.events import ToolCallItem, Usage
from streamflow.wire.dialects import get_encoder
from streamflow.wire.dialects._emitter import Emitter

CALLS = [ToolCallItem("tool_call.done", "get_weather", "call_w", {"city": "Lisbon"}),
         ToolCallItem("tool_call.done", "delete_files", "call_d", {"path": "/tmp/x"}),
         ToolCallItem("tool_call.done", "flaky", "call_f", {"n": 1})]


def turn_events() -> list[Any]:
    """A turn streaming three tool calls (their arguments in fragments)."""
    em = Emitter()
    em.note({"id": "msg_1", "model": "m"})
    em.text("Let me check.")
    for call in CALLS:
        text = json.dumps(call.arguments)
        em.tool_call(text[:5], name=call.name, tool_call_id=call.tool_call_id, new=True)
        em.tool_call(text[5:])
    em.stop(Usage(prompt_tokens=10, response_tokens=20), "tool_call")
    return em.drain()


def run_body(target: str, **flavour: Any) -> str:
    """One run: the turn, progress and result of one call, an error of another, and an
    approval request for the third."""
    enc = get_encoder(target)(run=True, **flavour)
    out = b"".join(enc.feed(e) for e in turn_events())
    weather, delete, _flaky = CALLS
    out += enc.tool_progress(weather, "looking up Lisbon", {"done": 0.5})
    out += enc.tool_progress(weather, "almost there", {"done": 0.9})
    out += enc.tool_results([ToolResult("call_w", "get_weather", {"temperature": 17})])
    out += enc.tool_results([ToolResult("call_f", "flaky", {"error": "Timeout"}, True)])
    out += enc.approval_request(delete, "approval-1")
    return (out + enc.finish()).decode()


@pytest.fixture(scope="module")
def verdict(node_clients: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    case = {"name": "parts", "vercel": run_body("vercel-ui", ai_sdk=5),
            "vercelV6": run_body("vercel-ui", ai_sdk=6),
            "vercelLatest": run_body("vercel-ui"), "agui": run_body("ag-ui")}
    file = tmp_path_factory.mktemp("agent-parts") / "cases.json"
    file.write_text(json.dumps([case]))
    done = subprocess.run([shutil.which("node") or "node", "check.mjs", str(file)],
                          cwd=node_clients, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = json.loads(done.stdout)
    return dict(result)


def tool_parts(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["toolCallId"]: p for p in message["parts"] if p["type"].startswith("tool-")}


@pytest.mark.parametrize("client", ["vercel", "vercelV6", "vercelLatest"])
def test_both_ai_sdk_majors_fold_the_tool_parts(verdict: dict[str, Any], client: str) -> None:
    got = verdict[client]
    assert got["schemaErrors"] == [] and got["streamErrors"] == []
    tools = tool_parts(got["message"])
    weather = tools["call_w"]
    assert (weather["state"], weather["output"]) == ("output-available", {"temperature": 17})
    assert not weather.get("preliminary")  # the final output replaced the progress
    assert tools["call_f"]["state"] == "output-error"
    assert tools["call_d"]["input"] == {"path": "/tmp/x"}
    types = got["types"]
    assert types.count("tool-input-start") == 3 and types.count("tool-input-delta") == 6
    assert types.count("tool-input-available") == 3


def test_progress_is_preliminary_output_before_the_result(verdict: dict[str, Any]) -> None:
    types = verdict["vercel"]["types"]
    outputs = [i for i, t in enumerate(types) if t == "tool-output-available"]
    assert len(outputs) == 3  # two preliminary, then the result


@pytest.mark.parametrize("client", ["vercelV6", "vercelLatest"])
def test_ai_sdk_6_and_7_show_the_call_waiting_for_approval(verdict: dict[str, Any],
                                                           client: str) -> None:
    part = tool_parts(verdict[client]["message"])["call_d"]
    assert part["state"] == "approval-requested"
    assert part["approval"] == {"id": "approval-1"}
    assert "tool-approval-request" in verdict[client]["types"]


def test_ai_sdk_v5_gets_the_approval_request_as_a_data_part(verdict: dict[str, Any]) -> None:
    parts = verdict["vercel"]["message"]["parts"]
    (data,) = [p for p in parts if p["type"] == "data-approval-request"]
    assert data["data"] == {"approvalId": "approval-1", "toolCallId": "call_d",
                            "toolName": "delete_files", "input": {"path": "/tmp/x"}}
    assert tool_parts(verdict["vercel"]["message"])["call_d"]["state"] == "input-available"


def test_ag_ui_tool_events_progress_and_interrupt(verdict: dict[str, Any]) -> None:
    got = verdict["agui"]
    assert got["schemaErrors"] == [] and got["verifyError"] is None
    types = got["types"]
    for kind in ("TOOL_CALL_START", "TOOL_CALL_END"):
        assert types.count(kind) == 3
    assert types.count("TOOL_CALL_ARGS") == 6
    assert types.count("TOOL_CALL_RESULT") == 2
    assert types.count("ACTIVITY_SNAPSHOT") == 2
    assert types[-1] == "RUN_FINISHED"
    finished = json.loads(run_body("ag-ui").split("data: ")[-1])
    (interrupt,) = finished["outcome"]["interrupts"]
    assert (interrupt["id"], interrupt["toolCallId"], interrupt["reason"]) == (
        "approval-1", "call_d", "tool_approval")
