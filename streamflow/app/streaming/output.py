"""``stream(..., output=T)``: the structured output of a stream, fed each delivered event.

:class:`StructuredOutput` holds the sans-IO :class:`~streamflow.core.structured.OutputParser`
for :class:`~streamflow.app.streaming.async_stream.Stream` and
:class:`~streamflow.app.streaming.sync_stream.SyncStream`: each event the consumer is handed
is fed to it first (so ``s.partial_output`` matches the events read so far), a stream
error gets the last snapshot as ``error.partial_output``, and the final message is
validated strictly into the output.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import StreamflowError
from ...core.events import UniEvent
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.message import Message
from ...core.structured import OutputFrom, OutputParser

__all__ = ["StructuredOutput"]

_NO_OUTPUT = "partial_output and final_output() need an output type: stream(..., output=T)"


class StructuredOutput:
    """The output part of one stream; ``None`` output: the stream has none (reads refuse)."""

    __slots__ = ("parser",)

    def __init__(self, output: Any, output_from: OutputFrom, limits: Limits | None) -> None:
        self.parser = None if output is None else OutputParser(
            output, output_from=output_from,
            max_bytes=(limits or DEFAULT_LIMITS).max_message_bytes)

    def feed(self, event: UniEvent) -> None:
        """One event handed to the consumer."""
        if self.parser is not None:
            self.parser.feed(event)

    @property
    def snapshot(self) -> Any:
        """The partial output so far (``None`` until something parses)."""
        if self.parser is None:
            raise RuntimeError(_NO_OUTPUT)
        return self.parser.snapshot

    def failed(self, error: BaseException) -> BaseException:
        """``error`` with the last snapshot as ``error.partial_output`` (returned)."""
        if (self.parser is not None and isinstance(error, StreamflowError)
                and error.partial_output is None):
            error.partial_output = self.parser.snapshot
        return error

    def final(self, message: Message) -> Any:
        """The output of the final ``message``, validated strictly (``OutputValidationError``)."""
        if self.parser is None:
            raise RuntimeError(_NO_OUTPUT)
        return self.parser.final(message)
