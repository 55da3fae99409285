"""Bounded inflation of a compressed body (issue 10, item 10)."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamflow.app.runtime import run_sync
from streamflow.core.errors import FramingError, LimitExceededError
from streamflow.core.limits import Limits
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sources import from_httpx
from streamflow.wire.framing.inflate import PIECE, Inflater

MiB = 1024 * 1024


def bomb(total: int) -> bytes:
    """gzip of ``total`` bytes of one endless SSE data line, compressed block by block."""
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [c.compress(b"data: ")]
    block = b"x" * MiB
    for _ in range(total // MiB):
        out.append(c.compress(block))
    out.append(c.flush())
    return b"".join(out)


@given(st.binary(max_size=4096), st.lists(st.integers(1, 500), max_size=8),
       st.sampled_from(["gzip", "deflate", "raw-deflate", "identity"]))
def test_any_chunking_inflates_to_the_same_bytes(data: bytes, cuts: list[int], how: str) -> None:
    if how == "gzip":
        raw = gzip.compress(data) + gzip.compress(data)  # two members
        expected = data + data
    elif how == "deflate":
        raw, expected = zlib.compress(data), data
    elif how == "raw-deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        raw, expected = c.compress(data) + c.flush(), data
        how = "deflate"
    else:
        raw, expected = data, data
    inflater = Inflater(how, piece=64)
    got, pos = [], 0
    for cut in [*cuts, len(raw)]:
        for piece in inflater.feed(raw[pos:pos + cut]):
            assert len(piece) <= 64
            got.append(piece)
        pos += cut
    got.append(inflater.close())
    assert b"".join(got) == expected


def test_a_malformed_gzip_body_is_a_framing_error() -> None:
    with pytest.raises(FramingError):
        list(Inflater("gzip").feed(b"\x1f\x8b\x08\x00garbage-that-is-not-deflate" * 4))


def test_a_gzip_bomb_stops_at_the_limit_with_memory_bounded_by_it() -> None:
    limit = 4 * MiB
    body = bomb(256 * MiB)  # ~250 KiB on the wire, 256 MiB inflated
    assert len(body) < MiB

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-encoding": "gzip", "content-type": "text/event-stream"}
        return httpx.Response(200, stream=httpx.ByteStream(body), headers=headers)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    source = from_httpx(client, client.build_request("POST", "http://test/v1/messages"))
    tracemalloc.start()
    with pytest.raises(LimitExceededError) as info:
        run_sync(source.pipe(pipeline("anthropic", limits=Limits(max_event_bytes=limit))))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.value.limit == "max_event_bytes"
    assert peak < 2 * limit + 2 * len(body) + 16 * PIECE, peak
