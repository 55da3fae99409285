"""Bad input raises only streamflow errors: every JSON value, of every type, at every position.

For every decoding dialect of the registry, valid bodies (every recording in
``tests/data`` and the fault bodies of ``tests/faults/fault_bodies.py``) are taken
apart into their JSON payloads, and the value at each position is replaced by a
value of another type -- null, booleans, integers (zero, negative, past 64 bits),
floats (huge, fractional), strings, lists, objects and nested mixes. Decoding the
result may succeed or fail, but a failure must be a
:class:`~streamflow.core.errors.StreamflowError` carrying its partial message: a bare
``TypeError``/``KeyError``/``AttributeError``/``ValueError`` is a bug (issue 22: the
openai-chat ``reasoning_details`` ``index: []`` that raised ``TypeError``).

The fault bodies are swept exhaustively (each position x each value of
:data:`EVERY_TYPE`); the recordings by hypothesis (a few positions at once, values
drawn from any JSON; a fifth of the profile's examples per recording, as there are
many recordings).
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from realdata import fault_bodies

from streamflow import StreamDecoder, StreamflowError
from streamflow.core.events import item_to_dict
from streamflow.wire.dialects import DIALECTS, get_dialect
from streamflow.wire.framing import make_framer
from streamflow.wire.framing.eventstream import EventStreamParser, encode_message

DATA = Path(__file__).resolve().parent.parent / "data"
BODIES = fault_bodies()
NO_JSON = {"speech": "its body is raw audio: there is no JSON value to replace"}

EVERY_TYPE: list[Any] = [
    None, True, 0, -7, 2**70, 1.5, 1e300, "", "x", [], [{"index": [], "type": {}}],
    {}, {"index": [], "type": "text"}, {"a": {"b": [{"c": None}]}},
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                              max_size=3),
    max_leaves=6)


@dataclass
class Body:
    """A valid body taken apart: its JSON ``docs`` and how to put them back into bytes."""

    dialect: str
    name: str
    docs: list[Any]
    build: Callable[[list[Any]], bytes]
    framing: str | None = None
    raw: bytes = b""  # the body as recorded (the bedrock fixtures are their events: rebuilt)

    def __post_init__(self) -> None:
        if not self.raw:
            self.raw = self.build(self.docs)

    def decode(self, docs: list[Any]) -> Any:
        """Decode the rebuilt body; only a streamflow error (with its partial) may escape."""
        return outcome(self.dialect, self.build(docs), self.framing)


def outcome(dialect: str, body: bytes, framing: str | None = None) -> Any:
    """``("ok", items)`` or ``("error", its type, partial items)``; any other exception escapes."""
    dec = StreamDecoder(dialect, framing=framing, clock=lambda: 1)
    try:
        dec.feed(body)
        dec.close()
    except StreamflowError as exc:
        assert exc.partial is not None, f"{type(exc).__name__} without its partial message"
        return "error", type(exc).__name__, [item_to_dict(i) for i in exc.partial.items]
    return "ok", [item_to_dict(i) for i in dec.message.items]


_RAW = object()  # marks a payload that is not JSON (``[DONE]``)


def _doc(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return (_RAW, text)


def _text(doc: Any) -> str:
    if type(doc) is tuple and doc and doc[0] is _RAW:
        return str(doc[1])
    return json.dumps(doc, ensure_ascii=False)


def _sse(dialect: str, name: str, raw: bytes) -> Body:
    frames = make_framer("sse").feed(raw)
    events = [f.event for f in frames]

    def build(docs: list[Any]) -> bytes:
        out = []
        for event, doc in zip(events, docs, strict=True):
            head = f"event: {event}\n" if event != "message" else ""
            out.append(f"{head}data: {_text(doc)}\n\n")
        return "".join(out).encode("utf-8", "surrogatepass")

    return Body(dialect, name, [_doc(f.data) for f in frames], build, raw=raw)


def _lines(dialect: str, name: str, raw: bytes, framing: str | None) -> Body:
    lines = [line for line in raw.decode().splitlines() if line.strip()]

    def build(docs: list[Any]) -> bytes:
        return "".join(_text(d) + "\n" for d in docs).encode("utf-8", "surrogatepass")

    return Body(dialect, name, [_doc(line) for line in lines], build, framing, raw)


def _whole(dialect: str, name: str, raw: bytes) -> Body:
    return Body(dialect, name, [json.loads(raw)],
                lambda docs: (_text(docs[0]) + "\n").encode("utf-8", "surrogatepass"), raw=raw)


def _aws(kind: str, payload: Any) -> bytes:
    return encode_message({":event-type": kind, ":content-type": "application/json",
                           ":message-type": "event"},
                          _text(payload).encode("utf-8", "surrogatepass"))


def _converse(name: str, events: list[tuple[str, Any]]) -> Body:
    kinds = [k for k, _ in events]
    return Body("bedrock", name, [p for _, p in events],
                lambda docs: b"".join(_aws(k, d) for k, d in zip(kinds, docs, strict=True)))


def _invoke(name: str, natives: list[Any]) -> Body:
    def chunk(doc: Any) -> bytes:
        data = base64.b64encode(_text(doc).encode("utf-8", "surrogatepass")).decode()
        return _aws("chunk", {"bytes": data})

    return Body("bedrock-invoke", name, natives, lambda docs: b"".join(map(chunk, docs)))


def _detected(raw: bytes) -> tuple[str, str | None] | None:
    dec = StreamDecoder("auto")
    try:
        dec.feed(raw)
        dec.close()
    except StreamflowError:
        pass
    return (dec.dialect, dec.framing) if dec.dialect else None


def _recording(path: Path) -> Body | None:
    raw = path.read_bytes()
    name = f"{path.parent.name}/{path.name}"
    if path.parent.name == "bedrock":
        doc = json.loads(raw)
        return (_invoke(name, doc) if path.name.startswith("invoke") else
                _converse(name, [(k, p) for k, p in doc]))
    if path.parent.name == "embeddings":
        return _whole("openai-embeddings", name, raw)
    found = _detected(raw)
    if found is None:
        return None  # not a stream (cli/not_a_stream.txt)
    dialect, framing = found
    if framing == "ndjson":
        return _lines(dialect, name, raw, framing)
    return _sse(dialect, name, raw)


def _fault_body(dialect: str) -> Body:
    raw = BODIES.body_for(dialect)
    name = f"fault_bodies:{dialect}"
    framing = get_dialect(dialect).framing
    if framing == "eventstream":
        messages = EventStreamParser().feed(raw)
        body = _converse(name, [(str(m.event_type), json.loads(m.payload)) for m in messages])
        body.raw = raw
        return body
    if framing == "ndjson":
        return _lines(dialect, name, raw, None)
    return _sse(dialect, name, raw)


RECORDINGS = [b for p in sorted(DATA.rglob("*")) if p.is_file()
              for b in [_recording(p)] if b is not None]
FAULT_BODIES = [_fault_body(d) for d in BODIES.available()]
ALL = RECORDINGS + FAULT_BODIES


def paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every position in a JSON value, the root included."""
    yield path
    if type(value) is dict:
        for key, child in value.items():
            yield from paths(child, (*path, key))
    elif type(value) is list:
        for i, child in enumerate(value):
            yield from paths(child, (*path, i))


def replaced(docs: list[Any], where: int, path: tuple[Any, ...], value: Any) -> list[Any]:
    """A copy of ``docs`` with the value at ``path`` of doc ``where`` replaced."""
    out = list(docs)
    if not path:
        out[where] = copy.deepcopy(value)
        return out
    doc = out[where] = copy.deepcopy(docs[where])
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = copy.deepcopy(value)
    return out


def test_every_decoding_dialect_has_bodies_to_mutate() -> None:
    covered = {b.dialect for b in ALL}
    missing = [d for d in DIALECTS if d not in covered and d not in NO_JSON]
    assert not missing, f"no valid body to mutate for {missing}"


@pytest.mark.parametrize("body", ALL, ids=lambda b: b.name)
def test_a_body_rebuilt_from_its_values_decodes_as_the_body(body: Body) -> None:
    """The mutations below are of the recording itself: taken apart and put back, it is
    read the same (so a value replaced is the only difference)."""
    assert body.decode(body.docs) == outcome(body.dialect, body.raw, body.framing)


def test_an_unhashable_reasoning_details_index_is_a_protocol_error() -> None:
    """Issue 22: this body raised a bare ``TypeError`` (a list used as a dict key)."""
    body = (b'data: {"choices":[{"index":0,"delta":{"reasoning_details":[{"index":[]}]}}]}'
            b"\n\ndata: [DONE]\n\n")
    result = outcome("openai-chat", body)
    assert result[:2] == ("error", "ProtocolError")


@pytest.mark.parametrize("body", FAULT_BODIES, ids=lambda b: b.dialect)
def test_every_type_at_every_position_gives_only_streamflow_errors(body: Body) -> None:
    for where, doc in enumerate(body.docs):
        if type(doc) is tuple:
            continue  # [DONE]
        for path in paths(doc):
            for value in EVERY_TYPE:
                try:
                    body.decode(replaced(body.docs, where, path, value))
                except AssertionError:
                    raise
                except Exception as exc:
                    raise AssertionError(
                        f"{body.name}: doc {where} at {list(path)} = {value!r:.60} raised "
                        f"{type(exc).__name__}: {exc}") from exc


@pytest.mark.parametrize("body", RECORDINGS, ids=lambda b: b.name)
@settings(deadline=None, max_examples=max(10, settings.default.max_examples // 5),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_any_values_at_any_positions_of_a_recording_give_only_streamflow_errors(
        body: Body, data: st.DataObject) -> None:
    docs = body.docs
    json_docs = [i for i, d in enumerate(docs) if type(d) is not tuple]
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        where = data.draw(st.sampled_from(json_docs), label="doc")
        path = data.draw(st.sampled_from(list(paths(docs[where]))), label="path")
        value = data.draw(st.sampled_from(EVERY_TYPE) | json_values, label="value")
        docs = replaced(docs, where, path, value)
    body.decode(docs)
