"""Sinks: what applications subscribe to a stream (see :mod:`streamflow.reactive.sinks.base`).

Each sink module adds one import line below; ``base`` holds the protocol.
"""

from __future__ import annotations

from .base import AsyncSink, AsyncSinkFeeder, BaseSink, OverflowPolicy, Sink, SinkError
from .log import LogSink
from .otel import OtelSink
from .recorder import Recorder, Recording, read_recording
from .redis import RedisStreamSink
from .render import RenderSink

__all__ = [
    "AsyncSink",
    "AsyncSinkFeeder",
    "BaseSink",
    "LogSink",
    "OtelSink",
    "OverflowPolicy",
    "Recorder",
    "Recording",
    "RedisStreamSink",
    "RenderSink",
    "Sink",
    "SinkError",
    "read_recording",
]
