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

from ...core.errors import FramingError

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
        self._head = b""  # deflate: the first two bytes tell zlib-wrapped from raw
        self._d: Any = None
        if self._wbits is not None and self.encoding != "deflate":
            self._d = zlib.decompressobj(self._wbits)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data``, produced one at a time."""
        if self._wbits is None:
            if len(data) <= self.piece and type(data) is bytes:
                yield data  # nothing to inflate or cut: no copy
                return
            for i in range(0, len(data), self.piece):
                yield bytes(data[i:i + self.piece])
            return
        buf = bytes(data)
        if self._d is None:  # deflate, undecided
            self._head += buf
            if len(self._head) < 2:
                return
            cmf, flg = self._head[0], self._head[1]
            wrapped = cmf & 0x0F == 8 and (cmf * 256 + flg) % 31 == 0
            self._d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            buf, self._head = self._head, b""
        while buf:
            try:
                out = self._d.decompress(buf, self.piece)
            except zlib.error as exc:
                raise FramingError(f"malformed {self.encoding} body ({exc})") from None
            if out:
                yield out
            buf = self._d.unconsumed_tail
            if not buf and self._d.eof and self._d.unused_data:  # the next gzip member
                buf = self._d.unused_data
                self._d = zlib.decompressobj(self._wbits)

    def close(self) -> bytes:
        """End of body: what the decoder still holds."""
        if self._d is None:
            if self._head:
                raise FramingError(f"malformed {self.encoding} body (cut after one byte)")
            return b""
        try:
            return bytes(self._d.flush())
        except zlib.error as exc:
            raise FramingError(f"malformed {self.encoding} body ({exc})") from None
