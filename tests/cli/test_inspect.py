"""``streamflow inspect``: recorded bodies in, the assembled message (or the failure) out."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from realdata import DATA, REAL, framing_for, real_body, real_path

import streamflow
from streamflow import StreamflowError, assemble
from streamflow.cli.inspect import escape_for_terminal
from streamflow.cli.main import COMMANDS, main

CLI = DATA / "cli"
TOOL_TURN = CLI / "anthropic_tool_turn.sse"
HAS_OPENAI_CHAT = importlib.util.find_spec(
    "streamflow.wire.dialects.openai_chat.decode") is not None


def inspect(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["inspect", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def inspect_json(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, Any]:
    code, out, _ = inspect(capsys, *args, "--json")
    return code, json.loads(out)


def test_json_form_is_the_whole_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = inspect_json(capsys, TOOL_TURN)
    assert code == 0
    assert isinstance(data.pop("created_at"), int)
    assert data == {
        "id": "msg_cli_01",
        "model": "claude-test-1",
        "role": "assistant",
        "items": [
            {"type": "thinking.done", "thinking": "The user wants the weather.",
             "fidelity": {"signature": "c2lnLXRlc3Q="}, "provider": None},
            {"type": "text.done", "text": "Let me check Paris — one moment.",
             "fidelity": None, "provider": None},
            {"type": "tool_call.done", "name": "get_weather", "tool_call_id": "toolu_cli_1",
             "arguments": {"city": "Paris", "unit": "c"}, "fidelity": None, "provider": None},
        ],
        "usage_metadata": {
            "cached_tokens": 5, "prompt_tokens": 30, "thoughts_tokens": None,
            "response_tokens": 42, "cache_write_tokens": 0,
            "provider": {"input_tokens": 25, "cache_read_input_tokens": 5,
                         "cache_creation_input_tokens": 0, "output_tokens": 42},
        },
        "finish_reason": "tool_call",
        "complete": True,
        "provider": {"id": "msg_cli_01", "model": "claude-test-1", "stop_reason": "tool_use",
                     "stop_sequence": None},
    }


def test_json_keeps_non_ascii_readable(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = inspect(capsys, TOOL_TURN, "--json")
    assert "Paris — one moment." in out
    assert out.startswith('{\n  "id": "msg_cli_01",')


def test_human_form_summarises_every_item(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = inspect(capsys, TOOL_TURN)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "msg_cli_01" in lines[0] and "claude-test-1" in lines[1]
    assert "anthropic" in lines[2] and "complete" in lines[3]
    thinking = lines.index(next(line for line in lines if line.startswith("[thinking]")))
    assert "signature (12 chars)" in lines[thinking]
    assert lines[thinking + 1] == "  | The user wants the weather."
    assert lines[thinking + 2] == "[text]"
    assert lines[thinking + 3] == "  Let me check Paris — one moment."
    assert lines[thinking + 4] == "[tool_call] get_weather  id=toolu_cli_1"
    assert lines[thinking + 5:thinking + 9] == [
        "  {", '    "city": "Paris",', '    "unit": "c"', "  }"]
    assert "usage     prompt 30, cached 5, response 42" in lines
    assert "finish    tool_call" in lines
    assert "\x1b" not in out  # not a terminal: no colour codes


def test_stdin_dash(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TOOL_TURN.read_bytes())))
    code, data = inspect_json(capsys, "-")
    assert code == 0
    assert [i["type"] for i in data["items"]] == ["thinking.done", "text.done", "tool_call.done"]


def test_jsonl_file_is_read_as_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = inspect(capsys, CLI / "anthropic_text.jsonl")
    assert code == 0
    assert "ndjson" in out.splitlines()[2]
    assert "  Hello from JSON lines." in out.splitlines()
    # --framing overrides the suffix rule: as SSE these lines hold no event at all.
    code, data = inspect_json(capsys, CLI / "anthropic_text.jsonl", "--framing", "sse")
    assert code == 2 and data["items"] == []
    assert data["error"]["type"] == "IncompleteStreamError"


def test_cut_stream_prints_the_partial_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = inspect_json(capsys, CLI / "anthropic_cut.sse")
    assert code == 1
    assert data["complete"] is False and data["finish_reason"] is None
    assert data["items"] == [
        {"type": "thinking.done", "thinking": "The user wants the weather.",
         "fidelity": {"signature": "c2lnLXRlc3Q="}, "provider": None},
        {"type": "text.delta", "text": "Let me check ", "fidelity": None, "provider": None},
    ]
    assert data["error"]["type"] == "IncompleteStreamError"
    assert "message_stop" in data["error"]["message"]
    assert "hint" not in data["error"]  # the body ended cleanly between events


def test_cut_stream_human_form(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = inspect(capsys, CLI / "anthropic_cut.sse")
    assert code == 1
    assert "[text, unfinished]" in out and "  Let me check " in out.splitlines()
    assert "partial" in out.splitlines()[3]
    assert err.startswith("error: IncompleteStreamError: anthropic stream ended without")


def test_body_without_final_blank_line(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    # By the SSE rules an event needs its blank line: without it message_stop is discarded.
    stored = tmp_path / "stored.sse"
    stored.write_bytes(TOOL_TURN.read_bytes().rstrip(b"\n"))
    code, data = inspect_json(capsys, stored)
    assert code == 1
    assert [i["type"] for i in data["items"]] == ["thinking.done", "text.done", "tool_call.done"]
    assert data["error"]["type"] == "IncompleteStreamError"
    assert "--complete-last-event" in data["error"]["hint"]
    code, _, err = inspect(capsys, stored)
    assert code == 1 and "hint: " in err
    code, data = inspect_json(capsys, stored, "--complete-last-event")
    assert code == 0 and data["complete"] is True and data["finish_reason"] == "tool_call"


def test_provider_error_event(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = inspect_json(capsys, CLI / "anthropic_overloaded.sse")
    assert code == 1
    assert data["items"][0]["text"] == "Let me check "
    assert data["error"]["type"] == "ProviderError"
    assert data["error"]["message"] == "Overloaded"
    assert data["error"]["error_type"] == "overloaded_error"
    code, _, err = inspect(capsys, CLI / "anthropic_overloaded.sse")
    assert code == 1
    assert err.strip() == "error: ProviderError [overloaded_error]: Overloaded"


def test_explicit_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = inspect_json(capsys, TOOL_TURN, "--dialect", "anthropic")
    assert code == 0 and data["finish_reason"] == "tool_call"
    code, data = inspect_json(capsys, CLI / "anthropic_text.jsonl", "--dialect", "anthropic")
    assert code == 0 and data["items"][0]["text"] == "Hello from JSON lines."


def test_unknown_dialect_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = inspect(capsys, TOOL_TURN, "--dialect", "no-such-dialect")
    assert code == 2
    assert "invalid choice: 'no-such-dialect'" in err


def test_garbage_with_explicit_dialect_is_a_protocol_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, data = inspect_json(capsys, CLI / "not_a_stream.txt", "--dialect", "anthropic")
    assert code == 1
    assert data["items"] == [] and data["complete"] is False
    assert data["error"]["type"] == "ProtocolError"
    assert "malformed JSON" in data["error"]["message"]


@pytest.mark.skipif(not HAS_OPENAI_CHAT, reason="dialect openai-chat not written yet: auto "
                    "detection asks every registered dialect")
def test_garbage_is_not_detected(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = inspect_json(capsys, CLI / "not_a_stream.txt")
    assert code == 2  # bad input, not a failed stream
    assert data["error"]["type"] == "DialectDetectionError"
    assert "this is not a provider stream" in data["error"]["message"]


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = inspect(capsys, tmp_path / "absent.sse")
    assert code == 2 and out == ""
    assert "cannot read" in err and "absent.sse" in err
    code, _, err = inspect(capsys, tmp_path)  # a directory
    assert code == 2 and "cannot read" in err


def test_control_characters_never_reach_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = inspect(capsys, CLI / "anthropic_controls.sse")
    assert code == 0
    assert not any(ch in out for ch in "\x1b\x07\x9b\r")
    assert "  safe\\x1b[2J\\x1b]0;pwned\\x07 text\\x9b31m red\\x0dover" in out.splitlines()
    assert "  line two\tend" in out.splitlines()  # newline and tab are kept
    _, out, _ = inspect(capsys, CLI / "anthropic_controls.sse", "--json")
    assert not any(ch in out for ch in "\x1b\x07\x9b\r")
    text = json.loads(out)["items"][0]["text"]  # the JSON still holds the exact text
    assert text == "safe\x1b[2J\x1b]0;pwned\x07 text\x9b31m red\rover\nline two\tend"


def test_sanitize_keeps_printable_unicode() -> None:
    assert escape_for_terminal("naïve — 日本語\n\tok") == "naïve — 日本語\n\tok"
    assert escape_for_terminal("\x00\x1b\x7f\x85") == "\\x00\\x1b\\x7f\\x85"


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()  # the version, then which build runs
    assert out.startswith("streamflow 0.1.0, ")
    assert out.endswith("compiled (mypyc)") if streamflow.compiled else "pure Python" in out
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert "inspect" in capsys.readouterr().out


def test_a_subcommand_is_one_registry_line(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    (tmp_path / "sf_cli_hello.py").write_text(
        "def add_arguments(parser):\n    parser.add_argument('--name', default='world')\n"
        "def run(args):\n    print('hello', args.name)\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(COMMANDS, "hello", ("sf_cli_hello", "say hello"))
    monkeypatch.setitem(COMMANDS, "broken", ("sf_cli_no_such_module", "never imported"))
    assert main(["hello", "--name", "you"]) == 3
    assert capsys.readouterr().out == "hello you\n"
    assert main(["--help"]) == 0  # lists every command without importing any
    out = capsys.readouterr().out
    assert "say hello" in out and "never imported" in out


def test_python_dash_m_streamflow() -> None:
    proc = subprocess.run([sys.executable, "-m", "streamflow", "inspect", str(TOOL_TURN),
                           "--json"], capture_output=True, text=True, encoding="utf-8",
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["items"][2]["arguments"] == {"city": "Paris", "unit": "c"}


def test_cli_does_not_load_io_libraries() -> None:
    code = ("import sys, contextlib, io\n"
            "from streamflow.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['inspect', {str(TOOL_TURN)!r}]) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('reactivex', 'anyio', 'httpx', 'rich', 'trio')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == "[]"


# -- real recordings ----------------------------------------------------------------------

REAL_ANTHROPIC = sorted(p.name for p in (REAL / "anthropic").glob("*.*")) or ["<absent>"]


def _expected(relative: str) -> tuple[str, str | None]:
    """The text ``assemble`` gives the recording as it was on the wire, and its error type."""
    try:
        return assemble(real_body(relative), framing=framing_for(relative)).text, None
    except StreamflowError as exc:
        assert exc.partial is not None
        return exc.partial.text, type(exc).__name__


@pytest.mark.parametrize("name", REAL_ANTHROPIC)
def test_real_anthropic_recordings(capsys: pytest.CaptureFixture[str], name: str) -> None:
    relative = f"anthropic/{name}"
    path = real_path(relative)
    text, error = _expected(relative)
    raw = path.read_bytes()
    cut_last_event = name.endswith(".sse") and not raw.endswith((b"\n\n", b"\r\n\r\n"))
    code, data = inspect_json(capsys, path)
    if cut_last_event:
        # As stored, the last event (message_stop) has no blank line after it: inspect
        # reports what the library would, and says why.
        assert code == 1
        assert data["error"]["type"] == "IncompleteStreamError"
        assert "--complete-last-event" in data["error"]["hint"]
        code, data = inspect_json(capsys, path, "--complete-last-event")
    assert code == (0 if error is None else 1)
    assert "".join(i["text"] for i in data["items"] if i["type"].startswith("text.")) == text
    assert data.get("error", {}).get("type") == error
    assert data["complete"] is (error is None)
