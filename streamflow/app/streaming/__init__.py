"""Iterate a stream: ``async with streamflow.stream(...)`` and ``with streamflow.stream_sync(...)``.

The form every SDK offers first, on top of the same pipeline as ``run()``:
:mod:`.async_stream` (asyncio and trio) and :mod:`.sync_stream` (no event loop).
"""

from __future__ import annotations

from ._views import Blocks, BlockStream, TextStream
from .async_stream import Stream, stream
from .sync_stream import SyncBlockStream, SyncStream, stream_sync

__all__ = ["BlockStream", "Blocks", "Stream", "SyncBlockStream", "SyncStream", "TextStream",
           "stream", "stream_sync"]
