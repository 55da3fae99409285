"""The reactive operators: pipeable reactivex operators over the sans-IO core.

Each lives in its own module (``streamflow.reactive.operators.frame`` ...) and is exported
here. Every operator keeps its state per subscription.

=================== ==================================================================
``frame``           bytes -> frames (SSE, NDJSON... pluggable)
``parse_wire``      frames -> the dialect's typed wire events (pydantic models)
``decode``          frames (or wire events) -> UniEvent
``pipeline``        bytes -> UniEvent in one hop (frame + decode fused)
``group_by_block``  UniEvent -> one replaying observable per content group
``accumulate_json`` UniEvent -> live tool-call states (partial + strict parse)
``tap_usage``       calls back with the final usage, once; passes events through
``on_error``        raise / convert to a StreamFailure item / retry
``encode``          UniEvent -> a target's body bytes (anthropic, openai-chat...)
``from_async``      an async generator function over UniEvents, as an operator
=================== ==================================================================
"""

from __future__ import annotations

from ._base import Handlers, Operator, stateful
from .accumulate_json import ToolCallState, accumulate_json
from .decode import decode
from .encode import encode
from .frame import frame
from .from_async import from_async
from .group_by_block import Block, group_by_block
from .on_error import StreamFailure, StreamRestart, exponential_backoff, on_error
from .parse_wire import parse_wire
from .pipeline import pipeline
from .tap_usage import tap_usage

__all__ = [
    "Block",
    "Handlers",
    "Operator",
    "StreamFailure",
    "StreamRestart",
    "ToolCallState",
    "accumulate_json",
    "decode",
    "encode",
    "exponential_backoff",
    "frame",
    "from_async",
    "group_by_block",
    "on_error",
    "parse_wire",
    "pipeline",
    "stateful",
    "tap_usage",
]
