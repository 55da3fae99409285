"""Dialect ``openai-embeddings``: an OpenAI-compatible embeddings response as a UniEvent stream.

The stream is the ``POST /embeddings`` JSON body, delivered whole::

    {"object": "list", "model": "...",
     "data": [{"object": "embedding", "index": 0, "embedding": [0.1, ...]}, ...],
     "usage": {"prompt_tokens": 8, "total_tokens": 8}}

``embedding`` is a list of floats, or -- with ``encoding_format: "base64"`` -- the
base64 of little-endian float32 values. As the UniEvent model says, each input gives one
``embedding.delta`` (the whole vector) and one ``embedding.done``, in input order
(by ``index``, whatever order ``data`` lists them in), then the stop event with
``prompt_tokens`` and finish reason ``stop``; the model and any other field go to
the stop event's ``provider`` and each vector's ``index`` to its item's ``provider``.

The body is framed as JSON lines (a compact body is one line; a pretty-printed
one is many) and parsed whole at the end of the body, so events arrive at
:meth:`close`. A body of ``{"error": {...}}`` is a :class:`ProviderError`; a body
that does not parse (cut short) is :class:`IncompleteStreamError`. A compact
body is auto-detected; name the dialect for a pretty-printed one.
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar

from pydantic_core import from_json

from ....core.errors import IncompleteStreamError, LimitExceededError, ProtocolError, ProviderError
from ....core.events import EmbeddingItem, Usage
from ...framing.sse import ServerSentEvent
from .._readers import (
    b64_field,
    error_code,
    error_text,
    expect_index,
    expect_list,
    expect_obj,
    opt_obj,
    token_count,
)
from ..base import Decoder

__all__ = ["EmbeddingsDecoder", "decode_vector"]


def decode_vector(value: Any) -> list[float]:
    """A vector from its JSON form: a list of numbers, or base64 of little-endian float32."""
    if isinstance(value, str):
        raw = b64_field(value, "embedding")
        if len(raw) % 4:
            raise ProtocolError(f"base64 embedding of {len(raw)} bytes is not float32 values")
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if type(value) is not list or not all(
            type(x) in (float, int) and type(x) is not bool for x in value):
        raise ProtocolError("embedding must be a list of numbers or a base64 string")
    return [float(x) for x in value]


class EmbeddingsDecoder(Decoder[ServerSentEvent]):
    """Sans-IO decoder of an OpenAI embeddings response body (see module doc)."""

    name: ClassVar[str] = "openai-embeddings"
    framing: ClassVar[str] = "ndjson"
    terminator: ClassVar[str] = "a complete JSON body"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lines: list[str] = []
        self._size = 0

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A compact body: ``"object": "list"`` with ``"object": "embedding"`` data."""
        data = getattr(frame, "data", "")
        head = data[:400].replace(" ", "") if isinstance(data, str) else ""
        return '"object":"list"' in head and '"object":"embedding"' in head

    def handle(self, frame: ServerSentEvent) -> None:
        """Collect one line of the body."""
        if self.emitter.stopped:
            raise ProtocolError("data after the embeddings body", raw=frame.data)
        self._size += len(frame.data) + 1
        if self._size > self.limits.max_message_bytes:
            raise LimitExceededError("max_message_bytes", self.limits.max_message_bytes)
        self._lines.append(frame.data)
        if len(self._lines) == 1 and frame.data.endswith("}"):
            self._try_body()

    def _try_body(self) -> None:
        try:
            body = from_json("\n".join(self._lines))
        except ValueError:
            return
        self._body(body)

    def finish(self) -> None:
        """End of body: parse it whole and emit every vector, then stop."""
        if self.emitter.stopped:
            return
        text = "\n".join(self._lines)
        if not text.strip():
            raise IncompleteStreamError("empty embeddings body")
        try:
            body = from_json(text)
        except ValueError as exc:
            raise IncompleteStreamError(f"embeddings body cut short or malformed ({exc})") \
                from None
        self._body(body)

    def _body(self, body: Any) -> None:
        if type(body) is not dict:
            raise ProtocolError("embeddings body is not a JSON object")
        if "error" in body:
            err = body["error"]
            err = err if isinstance(err, dict) else {"message": err}
            code = err.get("code")
            raise ProviderError(str(err.get("message") or "embeddings error"),
                                code=error_code(code), type=error_text(err.get("type")),
                                body=body)
        data = expect_list(body.get("data"), "embeddings data")
        entries = sorted(enumerate(data), key=lambda p: _index(p[1], p[0]))
        em = self.emitter
        em.note({k: v for k, v in body.items() if k not in ("data", "usage", "object")})
        for position, entry in entries:
            extra = {k: v for k, v in entry.items() if k not in ("embedding", "object")}
            extra.setdefault("index", position)
            em.delta(EmbeddingItem("embedding.delta", decode_vector(entry.get("embedding")),
                                   None, extra))
            em.close_group()
        raw = opt_obj(body.get("usage"), "embeddings usage")
        usage = Usage(prompt_tokens=token_count(raw, "prompt_tokens"), provider=raw or None)
        em.stop(usage, "stop")


def _index(entry: Any, position: int) -> int:
    return expect_index(expect_obj(entry, "embeddings data entry").get("index", position),
                        "embedding index")
