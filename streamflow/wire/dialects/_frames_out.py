"""Frames written safely: the one place an encoder's output gets its SSE or NDJSON framing.

Every encoder writes its frames through these functions, so no string of a stream
(an upstream's event type, an id, a model name, a tool name, any ``provider`` value)
can end a line, start a field or dispatch an event of its own:

* **Field-line values** (``event:``, ``id:``) must be tokens: 1 to 200 characters of
  ``A-Z a-z 0-9 _ . : / -``. An encoder writes its own event names; a value from
  the stream that is not a token is a caller bug and raises ``ValueError`` (check
  with :func:`is_token` first and write the value inside the JSON instead).
* **Data** is JSON, written here (:func:`json_bytes`) or given as JSON text
  (:func:`text_bytes`): JSON escapes every control character, so it holds no CR or
  LF. Two more things are made safe, both without changing what the JSON means:
  U+2028, U+2029 and U+0085, which JSON leaves raw but ``str.splitlines()`` (httpx's
  ``iter_lines``, the line readers of many clients) breaks lines at, are written as
  ``\\u2028``-style escapes; a lone surrogate, which UTF-8 cannot encode (every JSON
  writer raises on it), is written as U+FFFD, as a UTF-8 decoder would read it.
* Raw data that is not JSON (the ``[DONE]`` sentinel) is checked: no CR, LF or NUL.

Pure functions, no I/O: the encoders' bytes are framed here, then written by whoever
drives them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

from pydantic_core import PydanticSerializationError, to_json

_TOKEN: Final = re.compile(r"[A-Za-z0-9_.:/-]{1,200}")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_BREAKS: Final = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"),
                  (b"\xc2\x85", b"\\u0085"))


def is_token(value: object) -> bool:
    """True when ``value`` may stand on a field line (``event:``, ``id:``) as it is."""
    return type(value) is str and _TOKEN.fullmatch(value) is not None


def field_line(field: str, value: str) -> bytes:
    """One ``field: value`` line; ``value`` must be a token (else ``ValueError``)."""
    if not is_token(value):
        raise ValueError(f"{value!r:.80} may not be written on an SSE {field}: line")
    return f"{field}: {value}\n".encode("ascii")


@lru_cache(maxsize=512)
def event_head(name: str) -> bytes:
    """``event: <name>`` and the start of its ``data:`` line (the per-token writers' prefix)."""
    return field_line("event", name) + b"data: "


def _scrub(obj: Any) -> Any:
    """``obj`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(obj, str):
        return _SURROGATE.sub("\ufffd", obj)
    if isinstance(obj, dict):
        return {_scrub(k): _scrub(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_scrub(v) for v in obj]
    return obj


def _unbroken(data: bytes) -> bytes:
    """UTF-8 JSON with the characters ``str.splitlines()`` breaks at escaped."""
    for raw, escaped in _BREAKS:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def json_bytes(obj: Any) -> bytes:
    """Compact UTF-8 JSON of ``obj`` that is safe on one line (see the module doc)."""
    try:
        data = to_json(obj)
    except PydanticSerializationError:
        data = to_json(_scrub(obj))  # lone surrogates; anything else raises again
    return _unbroken(data)


def text_bytes(json_text: str) -> bytes:
    """The UTF-8 of JSON text made elsewhere (``json.dumps``, pydantic), safe on one line."""
    try:
        data = json_text.encode("utf-8")
    except UnicodeEncodeError:
        data = _SURROGATE.sub("\ufffd", json_text).encode("utf-8")
    if b"\n" in data or b"\r" in data:
        raise ValueError("JSON text with a raw line break (indented JSON?)")
    return _unbroken(data)


def sse(obj: Any, event: str | None = None, id: str | None = None) -> bytes:
    """One SSE event whose data is ``obj`` as JSON; ``event``/``id`` must be tokens."""
    return sse_data(json_bytes(obj), event, id, checked=True)


def sse_data(data: bytes, event: str | None = None, id: str | None = None, *,
             checked: bool = False) -> bytes:
    """One SSE event of ready ``data``: JSON from this module (``checked``), else
    raw bytes that must hold no CR, LF or NUL (``ValueError``)."""
    if not checked and (b"\n" in data or b"\r" in data or b"\0" in data):
        raise ValueError(f"SSE data with a line break or NUL: {data[:80]!r}")
    head = b""
    if event is not None:
        head = field_line("event", event)
    if id is not None:
        head += field_line("id", id)
    return head + b"data: " + data + b"\n\n"


def json_line(obj: Any) -> bytes:
    """One NDJSON line: ``obj`` as JSON (see :func:`json_bytes`) and ``\\n``."""
    return json_bytes(obj) + b"\n"
