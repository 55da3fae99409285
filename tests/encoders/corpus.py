"""The recordings every encoder is measured on, and the reading of one through a target.

``RECORDINGS`` lists every stream in tests/data/ and ../shared/fixtures/real/ that
streamflow decodes (files that are no stream at all -- an HTTP error body, a text
file -- are left out by name). :func:`source` decodes one; :func:`convert` encodes
its events (the stream's error re-raised at the end, as a pipeline delivers it) in a
target dialect; :func:`read_back` decodes those bytes again. :func:`summary` is what
every target must carry: text, thinking, tool calls, usage and finish reason.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realdata import DATA, REAL, real_path

from streamflow import encode
from streamflow.core.errors import StreamflowError
from streamflow.core.events import InlineThinkingItem, ThinkingItem, UniEvent
from streamflow.core.message import Message
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.framing.eventstream import encode_message

TARGETS = ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama", "uni",
           "uni-jsonl"]
NOT_STREAMS = {"cli/not_a_stream.txt", "bedrock/pyd_bedrock_streaming_error.json",
               "embeddings/openai_error.json"}
SUFFIXES = (".sse", ".jsonl", ".json", ".bin")


def _listing(root: Path, tag: str) -> list[str]:
    if not root.exists():
        return []
    return sorted(f"{tag}:{p.relative_to(root)}" for p in root.rglob("*")
                  if p.suffix in SUFFIXES and str(p.relative_to(root)) not in NOT_STREAMS)


RECORDINGS = _listing(DATA, "data") + _listing(REAL, "real")


def _event(headers: dict[str, str], payload: Any) -> bytes:
    return encode_message({":content-type": "application/json", ":message-type": "event",
                           **headers}, json.dumps(payload).encode())


def body_of(rec: str) -> bytes:
    """The body of a recording (bedrock's authored JSON event lists framed as the service
    frames them, as tests/dialects/test_bedrock.py does). A ``real:`` recording absent
    from this checkout skips the test (:func:`realdata.real_path`)."""
    tag, _, rel = rec.partition(":")
    path = DATA / rel if tag == "data" else real_path(rel)  # skips when absent
    body = path.read_bytes()
    if tag == "data" and rel.startswith("bedrock/"):
        natives = json.loads(body)
        if rel.startswith("bedrock/invoke"):
            return b"".join(_event({":event-type": "chunk"}, {"bytes": base64.b64encode(
                json.dumps(n).encode()).decode()}) for n in natives)
        return b"".join(_event({":event-type": kind}, payload) for kind, payload in natives)
    if rel.endswith(".sse") and not body.endswith((b"\n\n", b"\r\n\r\n")):
        body += b"\r\n\r\n" if body.endswith(b"\r\n") else b"\n\n"  # see realdata.real_body
    return body


@dataclass
class Read:
    """A body read to its end: the events, the (final or partial) message, the error."""

    dialect: str | None
    events: list[UniEvent]
    message: Message
    error: StreamflowError | None


def read(body: bytes, dialect: str = "auto", framing: str | None = None) -> Read:
    decoder = StreamDecoder(dialect, framing=framing)
    events: list[UniEvent] = []
    error = None
    try:
        events += decoder.feed(body)
        events += decoder.close()
    except StreamflowError as exc:
        events += exc.events
        error = exc
    return Read(decoder.dialect, events, decoder.message, error)


def source(rec: str) -> Read:
    dialect = "openai-embeddings" if "embeddings/" in rec else "auto"
    return read(body_of(rec), dialect, framing="ndjson" if rec.endswith(".jsonl") else None)


def replay(src: Read) -> Iterator[UniEvent]:
    yield from src.events
    if src.error is not None:
        raise src.error


def convert(src: Read, target: str, **flavour: Any) -> bytes:
    out = []
    try:
        out.extend(encode(replay(src), target, **flavour))
    except StreamflowError as exc:
        assert exc is src.error
    return b"".join(out)


def read_back(body: bytes, target: str) -> Read:
    return read(body, target)


def opaque(msg: Message) -> set[str]:
    """Every opaque reasoning value to send back: thinking signatures (also inside
    ``reasoning_details``) and redacted/encrypted reasoning data."""
    out: set[str] = set()
    for item in msg.items:
        if isinstance(item, InlineThinkingItem) and item.data:
            out.add(item.data.decode())
        elif isinstance(item, ThinkingItem) and item.fidelity:
            fid = item.fidelity
            out.update(v for k, v in fid.items() if k in ("signature", "thought_signature"))
            out.update(d["signature"] for d in fid.get("reasoning_details") or ()
                       if isinstance(d, dict) and d.get("signature"))
    return out


def summary(msg: Message) -> dict[str, Any]:
    """What every target carries: text, thinking, calls, usage, finish reason."""
    u = msg.usage_metadata
    return {
        "text": msg.text,
        "thinking": msg.thinking,
        "calls": [(c.name, c.tool_call_id, c.arguments) for c in msg.tool_calls],
        "usage": None if u is None else (u.prompt_tokens, u.response_tokens, u.cached_tokens,
                                         u.thoughts_tokens),
        "finish": msg.finish_reason,
    }
