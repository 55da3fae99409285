"""streamflow: LLM provider streams as one typed, lossless, provider-neutral event model.

The sans-IO core turns body bytes into :class:`UniEvent` events
(:class:`StreamDecoder`, :func:`assemble`); the reactive layer
(:mod:`streamflow.reactive.operators`) wraps it in composable reactivex operators, and
sinks subscribe to the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# first: decides, before any hot-path module loads, whether the compiled build is used
from . import _build

# isort: split
from ._extras import VERSION
from ._lazy import lazy_exports
from .core.errors import (
    CancelledStreamError,
    DialectDetectionError,
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    LimitExceededError,
    OutputValidationError,
    ProtocolError,
    ProviderError,
    RequestError,
    SchemaRefusedError,
    SinkError,
    StreamflowError,
    StreamGapError,
    StreamNotFoundError,
    StreamTimeoutError,
    ToolCallArgumentParseError,
    TransportError,
)
from .core.events import (
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
from .core.limits import Limits
from .core.message import Assembler, Message
from .reactive.types import SinkLike, SourceLike
from .wire.decoder import StreamDecoder, assemble
from .wire.encoding import encode

if TYPE_CHECKING:  # loaded lazily at run time (see _LAZY below); typed for mypy and editors
    from .app.agent import Agent, AgentEvent, AgentResult, AgentStream
    from .app.failover import Breaker, Endpoint, Failover
    from .app.models import from_model
    from .app.runtime import run, run_sync
    from .app.streaming import Stream, SyncStream, stream, stream_sync
    from .app.tools import ToolRegistry
    from .app.tools.dispatch import ToolDispatchSink
    from .reactive._scope import scope
    from .reactive.operators.on_error import StreamFailure, StreamRestart
    from .reactive.operators.pipeline import pipeline
    from .reactive.sinks.log import LogSink
    from .reactive.sinks.recorder import Recorder
    from .reactive.sinks.render import RenderSink

__version__ = VERSION
compiled: bool = _build.is_compiled()
"""True when the mypyc-compiled hot path runs (docs/performance.md, "Compiled build")."""

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "AgentStream",
    "Assembler",
    "Breaker",
    "CancelledStreamError",
    "ContentItem",
    "DialectDetectionError",
    "EmbeddingItem",
    "Endpoint",
    "Failover",
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
    "RequestError",
    "ProviderError",
    "Recorder",
    "RenderSink",
    "from_model",
    "SchemaRefusedError",
    "SinkError",
    "SinkLike",
    "SourceLike",
    "Stream",
    "StreamDecoder",
    "StreamFailure",
    "StreamGapError",
    "StreamNotFoundError",
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
    "pipeline": "streamflow.reactive.operators.pipeline",
    "run": "streamflow.app.runtime",
    "run_sync": "streamflow.app.runtime",
    "scope": "streamflow.reactive._scope",
    "StreamFailure": "streamflow.reactive.operators.on_error",
    "StreamRestart": "streamflow.reactive.operators.on_error",
    "stream": "streamflow.app.streaming",
    "stream_sync": "streamflow.app.streaming",
    "Stream": "streamflow.app.streaming",
    "SyncStream": "streamflow.app.streaming",
    "Agent": "streamflow.app.agent",
    "AgentEvent": "streamflow.app.agent",
    "AgentResult": "streamflow.app.agent",
    "AgentStream": "streamflow.app.agent",
    "ToolRegistry": "streamflow.app.tools",
    "Failover": "streamflow.app.failover",
    "Endpoint": "streamflow.app.failover",
    "Breaker": "streamflow.app.failover",
    "from_model": "streamflow.app.models",
    "ToolDispatchSink": "streamflow.app.tools.dispatch",
    "RenderSink": "streamflow.reactive.sinks.render",
    "Recorder": "streamflow.reactive.sinks.recorder",
    "LogSink": "streamflow.reactive.sinks.log",
}


if not TYPE_CHECKING:  # mypy sees the imports above, and flags unknown names
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)
