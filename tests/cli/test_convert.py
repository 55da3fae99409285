"""``streamflow convert``: a body re-written in another dialect, as it decodes."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import streamflow
from streamflow.cli.convert import convert_body
from streamflow.cli.main import main
from streamflow.core.errors import ProviderError

DATA = Path(__file__).resolve().parents[1] / "data"
TURN = DATA / "cli" / "anthropic_tool_turn.sse"
OVERLOADED = DATA / "cli" / "anthropic_overloaded.sse"


def test_converts_a_file_to_another_dialect(tmp_path: Path) -> None:
    out = tmp_path / "turn.chat.sse"
    assert main(["convert", str(TURN), "--to", "openai-chat", "-o", str(out)]) == 0
    converted = streamflow.assemble(out.read_bytes(), "openai-chat")
    original = streamflow.assemble(TURN.read_bytes())
    assert converted.text == original.text
    assert [(c.name, c.tool_call_id, c.arguments) for c in converted.tool_calls] == \
        [(c.name, c.tool_call_id, c.arguments) for c in original.tool_calls]
    assert out.read_bytes().endswith(b"data: [DONE]\n\n")


def test_reads_stdin_and_writes_stdout(monkeypatch: pytest.MonkeyPatch,
                                       capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TURN.read_bytes())))
    assert main(["convert", "-", "--from", "anthropic", "--to", "uni-jsonl"]) == 0
    body = capsysbinary.readouterr().out
    assert streamflow.assemble(body, "uni-jsonl").text == streamflow.assemble(
        TURN.read_bytes()).text


def test_a_failed_stream_ends_with_the_targets_error_event_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.sse"
    assert main(["convert", str(OVERLOADED), "--to", "openai-responses", "-o", str(out)]) == 1
    assert "Overloaded" in capsys.readouterr().err
    with pytest.raises(ProviderError, match="Overloaded") as info:
        streamflow.assemble(out.read_bytes(), "openai-responses")
    assert info.value.partial is not None and info.value.partial.text


def test_options_reach_the_encoder_and_bad_ones_exit_2(tmp_path: Path) -> None:
    src = DATA / "anthropic" / "seed000_thinking.sse"
    buf = io.BytesIO()
    convert_body(src.open("rb"), buf, "openai-chat", reasoning="reasoning_content")
    assert b'"reasoning_content":' in buf.getvalue()
    assert main(["convert", str(src), "--to", "anthropic", "--option", "nope=1"]) == 2
    assert main(["convert", str(src), "--to", "anthropic", "--option", "broken"]) == 2
    assert main(["convert", str(tmp_path / "missing"), "--to", "anthropic"]) == 2


@pytest.mark.parametrize(("to", "option", "says"), [
    ("openai-chat", "bogus=1", "unknown --option 'bogus': openai-chat takes reasoning=TEXT "
     "(default reasoning), include_usage=true|false (default true)"),
    ("anthropic", "bogus=1", "unknown --option 'bogus': anthropic takes no options"),
    ("openai-chat", "include_usage=maybe", "--option include_usage takes true or false"),
    ("openai-chat", "reasoning=yes", "reasoning must be 'reasoning' or 'reasoning_content': "
     "openai-chat takes reasoning=TEXT"),
    ("vercel-ui", "ai_sdk=six", "--option ai_sdk takes one of 5, 6, 7, got 'six'"),
    ("vercel-ui", "output_from=json", "--option output_from takes one of auto, text, tool"),
    ("vercel-ui", "output=int", "unknown --option 'output': vercel-ui takes run=true|false"),
    ("uni", "bogus=1", "unknown --option 'bogus': uni takes no options"),
    ("openai-chat", "broken", "--option takes KEY=VALUE, got 'broken'"),
])
def test_a_bad_option_is_a_usage_error_naming_the_targets_options(
        capsys: pytest.CaptureFixture[str], to: str, option: str, says: str) -> None:
    assert main(["convert", str(TURN), "--to", to, "--option", option]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: streamflow convert")
    assert f"streamflow convert: error: {says}" in err
    assert "__init__" not in err and "keyword argument" not in err


def test_option_values_are_typed_by_the_target(tmp_path: Path) -> None:
    out = tmp_path / "x.sse"
    assert main(["convert", str(TURN), "--to", "openai-chat", "--option", "include_usage=False",
                 "-o", str(out)]) == 0
    assert b'"usage"' not in out.read_bytes()
    assert main(["convert", str(TURN), "--to", "vercel-ui", "--option", "ai_sdk=6",
                 "--option", "message_id=true", "-o", str(out)]) == 0
    assert b'"messageId":"true"' in out.read_bytes()  # a text option stays text


def test_the_hint_for_a_body_that_is_no_stream_names_convert_s_own_flag(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(DATA / "cli" / "not_a_stream.txt"), "--to", "anthropic"]) == 2
    err = capsys.readouterr().err
    assert "name its dialect with --from NAME" in err and "--dialect" not in err
    assert main(["inspect", str(DATA / "cli" / "not_a_stream.txt")]) == 2
    assert "name its dialect with --dialect NAME" in capsys.readouterr().err


def test_writes_as_it_decodes() -> None:
    class Source(io.RawIOBase):
        """Gives the body 64 bytes at a time and records how far it was read."""

        def __init__(self, body: bytes) -> None:
            self.body, self.pos = body, 0

        def read(self, size: int = -1) -> bytes:
            chunk = self.body[self.pos:self.pos + 64]
            self.pos += len(chunk)
            return chunk

    class Sink(io.BytesIO):
        def __init__(self, source: Source) -> None:
            super().__init__()
            self.source, self.seen_at = source, []

        def write(self, data: bytes) -> int:  # type: ignore[override]
            self.seen_at.append(self.source.pos)
            return super().write(data)

    body = TURN.read_bytes()
    source = Source(body)
    sink = Sink(source)
    assert convert_body(source, sink, "anthropic") is None  # type: ignore[arg-type]
    assert sink.seen_at[0] < len(body) // 2  # the first bytes went out long before the end
