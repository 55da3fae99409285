"""Every recording in tests/data and ../shared/fixtures/real, decoded and written by an encoder.

Used by the real-client oracle tests: each case is the encoder's whole body plus the
message streamflow assembled from the same events (partial when the stream failed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realdata import DATA, REAL

from streamflow.core.errors import StreamflowError
from streamflow.core.events import UniEvent
from streamflow.core.message import Assembler, Message
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import get_encoder


@dataclass
class Encoded:
    """One recording written in one target: the body, the message, the error if it failed."""

    body: bytes
    message: Message
    error: StreamflowError | None


def recordings() -> list[Path]:
    """Every recording file we own (tests/data) and every real one (when present)."""
    own = [p for p in sorted(DATA.rglob("*")) if p.is_file()]
    real = [p for p in sorted(REAL.rglob("*")) if p.is_file() and p.name != "MANIFEST.tsv"]
    return own + real


def case_name(path: Path) -> str:
    """``data/anthropic/x.sse`` or ``real/anthropic/x.sse``."""
    return str(path.relative_to(path.parents[2]))


def read_body(path: Path) -> tuple[bytes, str | None]:
    """The body (final blank line restored for .sse, as realdata does) and its framing."""
    body = path.read_bytes()
    if path.suffix == ".sse" and not body.endswith((b"\n\n", b"\r\n\r\n")):
        body += b"\r\n\r\n" if body.endswith(b"\r\n") else b"\n\n"
    return body, "ndjson" if path.suffix == ".jsonl" else None


def decoded(body: bytes, framing: str | None) -> Iterator[UniEvent]:
    """The events of ``body`` (auto-detected); a failed stream yields what arrived, then raises."""
    decoder = StreamDecoder("auto", framing=framing)
    try:
        yield from decoder.feed(body)
        yield from decoder.close()
    except StreamflowError as error:
        yield from error.events
        raise


def encode_recording(path: Path, target: str, **flavour: Any) -> Encoded:
    """``path`` decoded, assembled, and written by the ``target`` encoder."""
    body, framing = read_body(path)
    encoder = get_encoder(target)(**flavour)
    assembler = Assembler()
    out: list[bytes] = []
    error: StreamflowError | None = None
    try:
        for event in decoded(body, framing):
            assembler.feed(event)
            out.append(encoder.feed(event))
    except StreamflowError as exc:
        error = exc
        out.append(encoder.fail(exc.with_partial(assembler.message)))
    return Encoded(b"".join(out), assembler.message, error)
