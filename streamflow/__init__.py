"""streamflow: LLM provider streams as one typed, lossless, provider-neutral event model.

The sans-IO core turns body bytes into :class:`UniEvent` events
(:class:`StreamDecoder`, :func:`assemble`); the reactive layer
(:mod:`streamflow.operators`) wraps it in composable reactivex operators, and
sinks subscribe to the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    OutputValidationError,
    ProtocolError,
    ProviderError,
    SchemaRefusedError,
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
from .types import SinkLike, SourceLike

if TYPE_CHECKING:  # loaded lazily at run time (see _LAZY below); typed for mypy and editors
    from ._scope import scope
    from .agent import Agent, AgentEvent, AgentResult, AgentStream
    from .operators.on_error import StreamFailure, StreamRestart
    from .operators.pipeline import pipeline
    from .runtime import run, run_sync
    from .sinks.log import LogSink
    from .sinks.recorder import Recorder
    from .sinks.render import RenderSink
    from .sinks.tools import ToolDispatchSink
    from .streaming import Stream, SyncStream, stream, stream_sync
    from .tools import ToolRegistry

__version__ = "0.1.0"
compiled: bool = _build.is_compiled()
"""True when the mypyc-compiled hot path runs (docs/performance.md, "Compiled build")."""

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "AgentStream",
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
    "OutputValidationError",
    "Limits",
    "LogSink",
    "Message",
    "ProtocolError",
    "ProviderError",
    "Recorder",
    "RenderSink",
    "SchemaRefusedError",
    "SinkError",
    "SinkLike",
    "SourceLike",
    "Stream",
    "StreamDecoder",
    "StreamFailure",
    "StreamRestart",
    "StreamTimeoutError",
    "StreamflowError",
    "SyncStream",
    "TextItem",
    "ThinkingItem",
    "ToolCallArgumentParseError",
    "ToolCallItem",
    "ToolDispatchSink",
    "ToolRegistry",
    "TransportError",
    "UniEvent",
    "Usage",
    "assemble",
    "compiled",
    "encode",
    "pipeline",
    "run",
    "run_sync",
    "scope",
    "stream",
    "stream_sync",
]

# The reactive layer (reactivex/anyio/httpx) loads on first use, so that
# ``import streamflow`` stays sans-IO (tests/test_sans_io.py).
_LAZY: dict[str, str] = {
    "pipeline": "streamflow.operators.pipeline",
    "run": "streamflow.runtime",
    "run_sync": "streamflow.runtime",
    "scope": "streamflow._scope",
    "StreamFailure": "streamflow.operators.on_error",
    "StreamRestart": "streamflow.operators.on_error",
    "stream": "streamflow.streaming",
    "stream_sync": "streamflow.streaming",
    "Stream": "streamflow.streaming",
    "SyncStream": "streamflow.streaming",
    "Agent": "streamflow.agent",
    "AgentEvent": "streamflow.agent",
    "AgentResult": "streamflow.agent",
    "AgentStream": "streamflow.agent",
    "ToolRegistry": "streamflow.tools",
    "ToolDispatchSink": "streamflow.sinks.tools",
    "RenderSink": "streamflow.sinks.render",
    "Recorder": "streamflow.sinks.recorder",
    "LogSink": "streamflow.sinks.log",
}


if not TYPE_CHECKING:  # mypy sees the imports above, and flags unknown names
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)
