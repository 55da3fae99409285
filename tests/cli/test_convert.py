"""``streamflow convert``: a body re-written in another dialect, as it decodes."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import streamflow
from streamflow.cli.convert import convert_body
from streamflow.cli.main import main
from streamflow.errors import ProviderError

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
