"""The AI SDK's own convertToModelMessages (npm ``ai`` v5 and the current major, ``ai-latest``)
converts the same UIMessage[] histories as from_ui_messages: the same content in the same order,
signatures byte for byte; and a UI message stream streamflow wrote, folded by the real
readUIMessageStream, goes back to the provider as the blocks it sent."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_history import HISTORY
from test_history_on_finish import recorded_blocks
from test_responses import TOOL_TURN

from streamflow.core.events import (
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from streamflow.core.requests import ToolResultPart, Turn
from streamflow.servers.web import from_ui_messages
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.targets.vercel_ui.encode import VercelUIEncoder

CORPUS: list[dict[str, Any]] = [
    {"name": "every-part-type", "messages": HISTORY},
    {"name": "text-only", "messages": [
        {"id": "1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]},
        {"id": "2", "role": "assistant", "parts": [{"type": "text", "text": "Hello!"}]},
        {"id": "3", "role": "user", "parts": [{"type": "text", "text": "Bye"},
                                              {"type": "text", "text": "now"}]}]},
    {"name": "pending-tool", "messages": [
        {"id": "1", "role": "user", "parts": [{"type": "text", "text": "Go"}]},
        {"id": "2", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "hm", "state": "done",
             "providerMetadata": {"streamflow": {"fidelity": {"thought_signature": "dGc="}}}},
            {"type": "dynamic-tool", "toolName": "search", "toolCallId": "d1",
             "state": "output-available", "input": {"q": "a"}, "output": "found"},
            {"type": "step-start"},
            {"type": "text", "text": "Found.", "state": "done"}]}]},
]


def run_node(node_dir: Path, tmp_path: Path, cases: list[dict[str, Any]], script: str) -> Any:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run(["node", str(node_dir / script), str(path)], capture_output=True,
                          text=True, timeout=120, cwd=node_dir)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def theirs(model_messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The content of the AI SDK's model messages, one tuple per part (system left out)."""
    out: list[tuple[Any, ...]] = []
    for message in model_messages:
        role, content = message["role"], message["content"]
        if role == "system":
            continue
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for part in content:
            kind = part["type"]
            if kind == "text":
                out.append((role, "text", part["text"]))
            elif kind == "reasoning":
                meta = (part.get("providerOptions") or {}).get("streamflow", {})
                out.append((role, "reasoning", part["text"], json.dumps(meta.get("fidelity")),
                            meta.get("data")))
            elif kind in ("file", "image"):
                out.append((role, "file", part.get("mediaType") or part.get("mimeType")))
            elif kind == "tool-call":
                out.append((role, "tool-call", part["toolCallId"], part["toolName"],
                            json.dumps(part["input"], sort_keys=True)))
            elif kind == "tool-result":
                output = part["output"]
                error = output["type"].startswith("error")
                value = output["value"] if isinstance(output["value"], str) else json.dumps(
                    output["value"], separators=(",", ":"))
                out.append(("tool", "tool-result", part["toolCallId"], error, value))
    return out


def ours(turns: list[Turn]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for turn in turns:
        for p in turn.parts:
            if isinstance(p, TextItem):
                out.append((turn.role, "text", p.text))
            elif isinstance(p, ThinkingItem):
                out.append((turn.role, "reasoning", p.thinking, json.dumps(p.fidelity), None))
            elif isinstance(p, InlineThinkingItem):
                out.append((turn.role, "reasoning", "", json.dumps(p.fidelity),
                            base64.b64encode(p.data).decode()))
            elif isinstance(p, InlineDataItem):
                out.append((turn.role, "file", p.mime_type))
            elif isinstance(p, ToolCallItem):
                out.append((turn.role, "tool-call", p.tool_call_id, p.name,
                            json.dumps(p.arguments, sort_keys=True)))
            elif isinstance(p, ToolResultPart):
                out.append(("tool", "tool-result", p.tool_call_id, p.is_error, p.text))
    return out


@pytest.mark.parametrize("major", ["v5", "latest"])
def test_same_content_as_convert_to_model_messages(node_clients: Path, tmp_path: Path,
                                                   major: str) -> None:
    results = run_node(node_clients, tmp_path, CORPUS, "convert.mjs")
    for case, result in zip(CORPUS, results, strict=True):
        assert result[major] is not None, "ai-latest is not installed"
        assert ours(from_ui_messages(case["messages"])) == theirs(result[major]), case["name"]


def test_round_trip_through_read_ui_message_stream(node_clients: Path, tmp_path: Path) -> None:
    encoder = VercelUIEncoder(run=True, message_id="m1")
    body = b"".join(encoder.feed(e) for e in StreamDecoder("auto").feed(TOOL_TURN.read_bytes()))
    body += encoder.finish()
    [folded] = run_node(node_clients, tmp_path, [{"name": "turn", "vercel": body.decode(),
                                                 "agui": ""}], "check.mjs")
    message = folded["vercel"]["message"]
    history = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather?"}]},
               message]
    sent = recorded_blocks()
    [_, assistant] = from_ui_messages(history, dialect="anthropic")
    assert [b["type"] for b in assistant["content"]] == [b["type"] for b in sent]
    assert assistant["content"][0]["signature"] == sent[0]["signature"]  # byte for byte
    assert assistant["content"][0]["thinking"] == sent[0]["thinking"]
    assert assistant["content"][1]["text"] == sent[1]["text"]
    assert assistant["content"][2]["input"] == sent[2]["input"]
