"""``Content-Encoding`` decoding with bounded output (sans-IO): a gzip bomb cannot balloon.

An HTTP client that inflates each raw chunk whole turns 64 KiB of gzip into up to
64 MiB at once, before any limit can look at it. :class:`Inflater` instead hands
out the decoded bytes in pieces of at most :data:`PIECE` bytes, lazily: the next
piece is only inflated once the consumer (the framer, which counts
``max_event_bytes``; the emitter, which counts ``max_message_bytes``) took the one
before, so peak memory stays near the limit that fires. Supports ``gzip``
(multi-member too), ``deflate`` (zlib-wrapped or raw) and ``identity``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

from ..errors import FramingError

__all__ = ["PIECE", "Inflater", "supported"]

PIECE = 64 * 1024
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def supported(encoding: str | None) -> bool:
    """True when :class:`Inflater` decodes ``encoding`` (a ``Content-Encoding`` value)."""
    return (encoding or "identity").strip().lower() in (*_WBITS, "identity", "")


class Inflater:
    """Feed raw body bytes, iterate the decoded bytes in pieces of at most ``piece``."""

    def __init__(self, encoding: str | None, piece: int = PIECE) -> None:
        self.encoding = (encoding or "identity").strip().lower()
        self.piece = piece
        self._wbits = _WBITS.get(self.encoding)
        self._d: Any = zlib.decompressobj(self._wbits) if self._wbits is not None else None
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data``, produced one at a time."""
        if self._d is None:
            for i in range(0, len(data), self.piece):
                yield bytes(data[i:i + self.piece])
            return
        buf = bytes(data)
        while buf:
            try:
                out = self._d.decompress(buf, self.piece)
            except zlib.error as exc:
                if self.encoding == "deflate" and not self._started:
                    self._d = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate
                    self._started = True
                    continue
                raise FramingError(f"malformed {self.encoding} body ({exc})") from None
            self._started = True
            if out:
                yield out
            buf = self._d.unconsumed_tail
            if not buf and self._d.eof and self._d.unused_data:  # the next gzip member
                buf = self._d.unused_data
                self._d = zlib.decompressobj(self._wbits or zlib.MAX_WBITS)

    def close(self) -> bytes:
        """End of body: what the decoder still holds."""
        if self._d is None:
            return b""
        try:
            return bytes(self._d.flush())
        except zlib.error as exc:
            raise FramingError(f"malformed {self.encoding} body ({exc})") from None
