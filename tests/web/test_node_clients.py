"""The real AI SDK v5 (``ai``) and AG-UI (``@ag-ui/core``, ``@ag-ui/client``) read our bytes.

Every recording in tests/data and ../shared/fixtures/real is decoded, then written by
the ``vercel-ui`` and ``ag-ui`` encoders; one Node process (tests/web/node/check.mjs)
validates every chunk with ``uiMessageChunkSchema`` and folds the stream with
``readUIMessageStream``, and validates every AG-UI event with ``EventSchemas`` and the
sequence with ``verifyEvents``. The folded UIMessage's text, reasoning and tool parts
must equal the message streamflow assembled (the partial one when the stream failed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cases import Encoded, case_name, encode_recording, recordings

from streamflow.app.tools import ToolResult
from streamflow.core.events import InlineThinkingItem, TextItem, ThinkingItem, ToolCallItem
from streamflow.core.message import Message
from streamflow.demo import recording
from streamflow.demo.tools import get_weather
from streamflow.wire.decoder import StreamDecoder, assemble
from streamflow.wire.dialects import get_encoder

BROKEN_VERCEL = 'data: {"type":"start"}\n\ndata: {"type":"text-delta","id":"t","delta":"x"}\n\n'
BROKEN_AGUI = ('data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
               'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}\n\n')


def expected_parts(message: Message) -> list[tuple[Any, ...]]:
    """The text, reasoning and tool parts a UIMessage of ``message`` must have, in order
    (of its first choice when it has several: a UI message shows that one)."""
    parts: list[tuple[Any, ...]] = []
    for item in message.choice(0).items:
        if isinstance(item, TextItem):
            parts.append(("text", item.text))
        elif isinstance(item, ThinkingItem):
            parts.append(("reasoning", item.thinking))
        elif isinstance(item, InlineThinkingItem):
            parts.append(("reasoning", ""))
        elif isinstance(item, ToolCallItem):
            done = item.type == "tool_call.done"
            parts.append(("tool", item.name, item.tool_call_id or None,
                          "input-available" if done else "output-error",
                          item.arguments if done else None))
    return parts


def folded_parts(ui_message: dict[str, Any] | None) -> list[tuple[Any, ...]]:
    """The same view of the UIMessage ``readUIMessageStream`` built (None: it built nothing)."""
    parts: list[tuple[Any, ...]] = []
    for part in ui_message["parts"] if ui_message else []:
        kind = part["type"]
        if kind in ("text", "reasoning"):
            parts.append((kind, part["text"]))
        elif kind.startswith("tool-"):
            call_id = None if part["toolCallId"].startswith("call-") else part["toolCallId"]
            state = part["state"]
            parts.append(("tool", kind[5:], call_id, state,
                          part.get("input") if state == "input-available" else None))
    return parts


@pytest.fixture(scope="module")
def oracle(node_clients: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each case's encodings and the Node clients' verdict on them, by case name."""
    encoded: dict[str, tuple[Encoded, Encoded]] = {}
    cases = []
    for path in recordings():
        vercel = encode_recording(path, "vercel-ui", ai_sdk=5)
        agui = encode_recording(path, "ag-ui")
        encoded[case_name(path)] = (vercel, agui)
        cases.append({"name": case_name(path), "vercel": vercel.body.decode(),
                      "vercelV6": encode_recording(path, "vercel-ui", ai_sdk=6).body.decode(),
                      "vercelLatest": encode_recording(path, "vercel-ui").body.decode(),
                      "agui": agui.body.decode()})
    cases.append({"name": "<broken>", "vercel": BROKEN_VERCEL, "agui": BROKEN_AGUI})
    cases.append({"name": "<agent run>", "vercel": demo_run("vercel-ui", ai_sdk=5).decode(),
                  "vercelV6": demo_run("vercel-ui", ai_sdk=6).decode(),
                  "vercelLatest": demo_run("vercel-ui").decode(),
                  "agui": demo_run("ag-ui").decode()})
    file = tmp_path_factory.mktemp("oracle") / "cases.json"
    file.write_text(json.dumps(cases))
    done = subprocess.run([shutil.which("node") or "node", "check.mjs", str(file)],
                          cwd=node_clients, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = {r["name"]: r for r in json.loads(done.stdout)}
    return {"encoded": encoded, "verdicts": verdicts}


NAMES = [case_name(p) for p in recordings()]


def demo_run(target: str, **flavour: Any) -> bytes:
    """The bundled demo conversation as one run: turn 1, the real tool result, turn 2."""
    encoder = get_encoder(target)(run=True, **flavour)
    turn1 = StreamDecoder("anthropic").feed(recording("anthropic", 1))
    body = b"".join(encoder.feed(e) for e in turn1)
    call = assemble(recording("anthropic", 1), "anthropic").tool_calls[0]
    assert isinstance(call.arguments, dict)
    body += encoder.tool_results([ToolResult(call.tool_call_id, call.name,
                                             get_weather(**call.arguments))])
    body += b"".join(encoder.feed(e) for e in StreamDecoder("anthropic").feed(
        recording("anthropic", 2)))
    return body + encoder.finish()


def test_an_agent_run_folds_into_one_message_with_two_steps(oracle: dict[str, Any]) -> None:
    verdict = oracle["verdicts"]["<agent run>"]
    assert verdict["vercel"]["schemaErrors"] == [] and verdict["vercel"]["streamErrors"] == []
    parts = verdict["vercel"]["message"]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "reasoning", "text", "tool-get_weather",
                                          "step-start", "text"]
    tool = parts[3]
    assert tool["state"] == "output-available"
    assert tool["input"] == {"city": "Lisbon", "unit": "celsius"}
    assert tool["output"]["temperature"] == 17
    assert parts[1]["providerMetadata"]["streamflow"]["fidelity"]["signature"]
    metadata = verdict["vercel"]["message"]["metadata"]
    assert [t["finish_reason"] for t in metadata["turns"]] == ["tool_call", "stop"]
    assert verdict["agui"]["schemaErrors"] == [] and verdict["agui"]["verifyError"] is None
    assert verdict["agui"]["types"].count("STEP_STARTED") == 2


def test_the_oracles_reject_a_broken_stream(oracle: dict[str, Any]) -> None:
    verdict = oracle["verdicts"]["<broken>"]
    assert verdict["vercel"]["streamErrors"], "readUIMessageStream accepted a delta without start"
    assert "TEXT_MESSAGE_CONTENT" in (verdict["agui"]["verifyError"] or "")


@pytest.mark.parametrize("name", NAMES)
def test_ai_sdk_v5_reads_our_ui_message_stream(oracle: dict[str, Any], name: str) -> None:
    encoded, _ = oracle["encoded"][name]
    verdict = oracle["verdicts"][name]["vercel"]
    assert verdict["schemaErrors"] == []
    assert verdict["done"], "the stream must end with data: [DONE]"
    assert verdict["types"][0] == "start"
    assert folded_parts(verdict["message"]) == expected_parts(encoded.message)
    if encoded.error is None:
        assert verdict["streamErrors"] == []
        assert verdict["types"][-2:] == ["finish-step", "finish"]
        usage = verdict["message"]["metadata"]["usage_metadata"]
        want = encoded.message.usage_metadata
        assert (usage or {}).get("response_tokens") == (want.response_tokens if want else None)
    else:
        assert verdict["types"][-1] == "error"
        assert verdict["streamErrors"] == [f"Error: {type(encoded.error).__name__}: "
                                           f"{encoded.error.message}"]


@pytest.mark.parametrize("name", NAMES)
def test_ag_ui_client_verifies_our_events(oracle: dict[str, Any], name: str) -> None:
    _, encoded = oracle["encoded"][name]
    verdict = oracle["verdicts"][name]["agui"]
    assert verdict["schemaErrors"] == []
    assert verdict["verifyError"] is None
    assert verdict["types"][0] == "RUN_STARTED"
    assert verdict["types"][-1] == ("RUN_ERROR" if encoded.error else "RUN_FINISHED")


@pytest.mark.parametrize("name", NAMES)
def test_the_current_ai_sdk_major_reads_our_ui_message_stream(oracle: dict[str, Any],
                                                              name: str) -> None:
    encoded, _ = oracle["encoded"][name]
    verdict = oracle["verdicts"][name]["vercelLatest"]  # ai-latest in tests/web/node
    assert verdict["schemaErrors"] == []
    assert folded_parts(verdict["message"]) == expected_parts(encoded.message)
    assert (verdict["streamErrors"] == []) == (encoded.error is None)


@pytest.mark.parametrize("major", ["vercelV6", "vercelLatest"])
@pytest.mark.parametrize("name", NAMES)
def test_each_ai_sdk_major_reads_the_stream_written_for_it(oracle: dict[str, Any], name: str,
                                                           major: str) -> None:
    """ai_sdk=6 checked by ai@6's own schema, ai_sdk=7 (the default) by ai@7's."""
    encoded, _ = oracle["encoded"][name]
    verdict = oracle["verdicts"][name][major]
    assert verdict["schemaErrors"] == []
    assert folded_parts(verdict["message"]) == expected_parts(encoded.message)
    assert (verdict["streamErrors"] == []) == (encoded.error is None)


def test_a_run_tells_v6_and_later_its_finish_reason_and_v5_nothing_it_does_not_know(
        oracle: dict[str, Any]) -> None:
    verdict = oracle["verdicts"]["<agent run>"]
    for major in ("vercel", "vercelV6", "vercelLatest"):
        assert verdict[major]["schemaErrors"] == [] and verdict[major]["streamErrors"] == []
    finishes = {major: [json.loads(e.removeprefix("data: ")) for e in body.split("\n\n")
                        if e.startswith('data: {"type":"finish"')]
                for major, body in (("v5", demo_run("vercel-ui", ai_sdk=5).decode()),
                                    ("v7", demo_run("vercel-ui").decode()))}
    assert "finishReason" not in finishes["v5"][0]
    assert finishes["v7"][0]["finishReason"] == "stop"  # the last turn's "stop"


def test_an_ai_sdk_major_it_does_not_write_is_refused() -> None:
    with pytest.raises(ValueError, match="5, 6, 7"):
        get_encoder("vercel-ui")(ai_sdk=4)
