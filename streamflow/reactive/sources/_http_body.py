"""The body of an httpx response, inflated by :class:`~streamflow.wire.framing.inflate.Inflater`.

httpx's ``iter_bytes`` inflates each raw chunk whole (a gzip bomb balloons before
any limit looks at it); these read the raw bytes and hand out bounded pieces, one
at a time, so peak memory stays near the limit that fires. An encoding the
Inflater does not know (``br``, ``zstd``) is left to httpx.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx

from ...wire.framing.inflate import Inflater, supported


def _streamed(response: httpx.Response) -> bool:
    """False when the body is in memory already (a mock transport's ``content=``)."""
    try:
        response.content  # noqa: B018
    except httpx.ResponseNotRead:
        return True
    return False


async def body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The decoded body of a streamed async response, in bounded pieces."""
    encoding = response.headers.get("content-encoding")
    if not supported(encoding) or not _streamed(response):
        async for chunk in response.aiter_bytes():
            yield chunk
        return
    inflater = Inflater(encoding)
    async for raw in response.aiter_raw():
        for piece in inflater.feed(raw):
            yield piece
    tail = inflater.close()
    if tail:
        yield tail


def body_chunks_sync(response: httpx.Response) -> Iterator[bytes]:
    """The decoded body of a streamed sync response, in bounded pieces."""
    encoding = response.headers.get("content-encoding")
    if not supported(encoding) or not _streamed(response):
        yield from response.iter_bytes()
        return
    inflater = Inflater(encoding)
    for raw in response.iter_raw():
        yield from inflater.feed(raw)
    tail = inflater.close()
    if tail:
        yield tail
