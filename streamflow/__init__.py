"""streamflow: LLM provider streams as one typed, lossless, provider-neutral event model.

The sans-IO core turns body bytes into :class:`UniEvent` events
(:class:`StreamDecoder`, :func:`assemble`); the reactive layer
(:mod:`streamflow.operators`) wraps it in composable reactivex operators, and
sinks subscribe to the result.
"""

from __future__ import annotations

# first: decides, before any hot-path module loads, whether the compiled build is used
from . import _build

# isort: split
from ._lazy import lazy_exports
from .decoder import StreamDecoder, assemble
from .encoding import encode
from .errors import (
    CancelledStreamError,
    DialectDetectionError,
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    SinkError,
    StreamflowError,
    StreamTimeoutError,
    ToolCallArgumentParseError,
    TransportError,
)
from .events import (
    ContentItem,
    EmbeddingItem,
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
)
from .limits import Limits
from .message import Assembler, Message

__version__ = "0.1.0"
compiled: bool = _build.is_compiled()
"""True when the mypyc-compiled hot path runs (README, "Compiled build")."""

__all__ = [
    "Assembler",
    "CancelledStreamError",
    "ContentItem",
    "DialectDetectionError",
    "EmbeddingItem",
    "FramingError",
    "HTTPStatusError",
    "IncompleteStreamError",
    "InlineDataItem",
    "InlineThinkingItem",
    "LimitExceededError",
    "Limits",
    "Message",
    "ProtocolError",
    "ProviderError",
    "SinkError",
    "StreamDecoder",
    "StreamTimeoutError",
    "StreamflowError",
    "TextItem",
    "ThinkingItem",
    "ToolCallArgumentParseError",
    "ToolCallItem",
    "TransportError",
    "UniEvent",
    "Usage",
    "assemble",
    "compiled",
    "encode",
]

# The reactive layer (reactivex/anyio/httpx) loads on first use, so that
# ``import streamflow`` stays sans-IO (tests/test_sans_io.py).
_LAZY: dict[str, str] = {
    "pipeline": "streamflow.operators.pipeline",
    "run": "streamflow.runtime",
    "run_sync": "streamflow.runtime",
    "scope": "streamflow.sources.bridge",
    "StreamFailure": "streamflow.operators.on_error",
    "StreamRestart": "streamflow.operators.on_error",
    "Agent": "streamflow.agent",
    "ToolRegistry": "streamflow.tools",
    "ToolDispatchSink": "streamflow.sinks.tools",
    "RenderSink": "streamflow.sinks.render",
    "Recorder": "streamflow.sinks.recorder",
    "LogSink": "streamflow.sinks.log",
}


__getattr__, __dir__ = lazy_exports(globals(), _LAZY)
