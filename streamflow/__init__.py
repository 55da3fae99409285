"""streamflow: LLM provider streams as one typed, lossless, provider-neutral event model.

The sans-IO core turns body bytes into :class:`UniEvent` events
(:class:`StreamDecoder`, :func:`assemble`); the reactive layer
(:mod:`streamflow.operators`) wraps it in composable reactivex operators, and
sinks subscribe to the result.
"""

from __future__ import annotations

from .errors import (
    CancelledStreamError,
    DialectDetectionError,
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
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
from .stream import StreamDecoder, assemble

__version__ = "0.1.0"

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
]
