"""``async with streamflow.stream(...) as s``: a stream you iterate, on top of ``run()``.

::

    async with streamflow.stream(source, dialect="auto", sinks=[RenderSink()]) as s:
        async for event in s:                 # UniEvents, in order
            ...
    message = s.message                       # the assembled Message

``s.text_stream`` yields the text deltas only; ``s.blocks()`` one async iterator of
items per content group; ``await s.final_message()`` reads the rest and returns the
message or raises the typed error (``.partial`` attached). The stream is one
``run()``: one subscription to ``source`` (one HTTP request), ``sinks`` fed exactly
as ``run()`` feeds them, the message assembled once. Leaving the block before the
end (``break``, an exception, a cancellation) disposes the subscription, which
closes the HTTP response at once. The error rule is ``run()``'s: the stream's own
error is raised by the iteration after every event before it; a failed sink gives
``SinkError`` at the end; an error nobody read is raised when the block exits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any

import anyio

from ...core.events import UniEvent
from ...core.limits import Limits
from ...core.message import Message
from ...core.structured import OutputFrom
from ...reactive._scope import scope
from ...reactive.types import SinkLike, SourceLike
from ..runtime import Run
from ._channel import Channel
from ._views import Blocks, BlockStream, TextStream
from .output import StructuredOutput

__all__ = ["BlockStream", "Stream", "stream"]


class Stream:
    """One streamed response: ``async with`` it, then iterate (see the module doc).

    Iterating ``s`` itself, :attr:`text_stream` and :meth:`blocks` all read the same
    single stream: each event is delivered once, to whichever iterator asks next.
    """

    def __init__(self, source: Any, *, dialect: str = "auto", sinks: tuple[Any, ...] = (),
                 framing: str | None = None, limits: Limits | None = None,
                 buffer: int = 256, options: dict[str, Any] | None = None,
                 transforms: Sequence[Any] = (), output: Any = None,
                 output_from: OutputFrom = "auto") -> None:
        self._run = Run(source, sinks, dialect=dialect, framing=framing, limits=limits,
                        options=options, caller="stream()", transforms=transforms)
        self._fan = self._run.fan
        self._channel = Channel(buffer, self._decoder_last_id)
        self._fan.add(self._channel)
        self._limits = limits
        self._output = StructuredOutput(output, output_from, limits)
        self._stack: AsyncExitStack | None = None
        self._raised = False
        self.last_event_id: str | None = None
        """The SSE id of the last event delivered (``None`` when the body has no ids)."""

    def _decoder_last_id(self) -> str | None:
        decoder = self._run.decoder
        return decoder.last_event_id if decoder is not None else None

    # -- context manager ---------------------------------------------------
    async def __aenter__(self) -> Stream:
        if self._stack is not None:
            raise RuntimeError("a Stream is entered once: call streamflow.stream(...) again")
        self._stack = stack = AsyncExitStack()
        owner = await stack.enter_async_context(scope(self._limits))
        try:
            owner.pressure.append(self._channel)
            self._run.start(owner)
        except BaseException as exc:
            await stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        assert self._stack is not None, "use `async with streamflow.stream(...)`"
        suppressed = False
        try:
            if not self._fan.finished:  # left early: close the request now
                self._run.cancel("the stream block was left early")
            elif self._run.outcome is None:
                with anyio.CancelScope(shield=exc is not None):
                    await self._run.finish()
        finally:
            suppressed = bool(await self._stack.__aexit__(exc_type, exc, tb))
        outcome = self._run.outcome
        if exc is None and isinstance(outcome, BaseException) and not self._raised:
            self._raised = True
            raise self._output.failed(outcome)  # an error nobody read: never silent
        return suppressed

    async def _settle(self) -> Message:
        """The final message, or the stream's error raised."""
        outcome = await self._run.finish()
        if isinstance(outcome, BaseException):
            self._raised = True
            raise self._output.failed(outcome)
        return outcome

    # -- reading -----------------------------------------------------------
    def __aiter__(self) -> Stream:
        return self

    async def __anext__(self) -> UniEvent:
        if self._stack is None:
            raise RuntimeError("use the stream inside `async with streamflow.stream(...) as s:`")
        entry = await self._channel.get()
        if entry is None:
            self.last_event_id = self._decoder_last_id() or self.last_event_id
            await self._settle()
            raise StopAsyncIteration
        event, self.last_event_id = entry
        self._output.feed(event)
        return event

    @property
    def text_stream(self) -> TextStream:
        """The text deltas only, as ``str`` (``async for text in s.text_stream``)."""
        return TextStream(self)

    def blocks(self) -> Blocks:
        """One :class:`BlockStream` (an async iterator of items) per content group."""
        return Blocks(self)

    @property
    def message(self) -> Message:
        """The assembled message: final once the stream ended, the partial one before."""
        return self._fan.message

    async def final_message(self) -> Message:
        """Read the rest of the stream; the final message, or the typed error raised."""
        async for _ in self:
            pass
        return await self._settle()

    @property
    def partial_output(self) -> Any:
        """With ``output=T``: the output so far, an instance of T's partial type.

        ``None`` until something parses; every field optional, recursively; a field once
        present never disappears and values only grow. Reading it never raises (it is
        parsed when read, at most once per event).
        """
        return self._output.snapshot

    async def final_output(self) -> Any:
        """With ``output=T``: read the rest; the output validated strictly as a T.

        Raises :class:`~streamflow.core.errors.OutputValidationError` (``.raw``, ``.errors``,
        ``.partial``) when it does not match, or the stream's own typed error (with
        ``.partial_output``) when the stream failed first.
        """
        return self._output.final(await self.final_message())


def stream(source: SourceLike, *, dialect: str = "auto", sinks: Iterable[SinkLike] = (),
           framing: str | None = None, limits: Limits | None = None, buffer: int = 256,
           transforms: Sequence[Any] = (), output: Any = None, output_from: OutputFrom = "auto",
           **options: Any) -> Stream:
    """A :class:`Stream` over ``source``, to use as ``async with stream(...) as s``.

    Args:
        source: a streamflow source (``from_httpx``, ``from_bytes``, ``ReplaySource``,
            a composed pipeline of UniEvents), ``bytes``, an async or sync iterable of
            ``bytes``, or an ``httpx.Response`` opened with ``stream=True``.
        dialect: the source's dialect (``"anthropic"``, ``"openai-chat"``...); ``"auto"``
            detects it from the first event.
        sinks: sinks fed every item, exactly as ``streamflow.run(source, *sinks)``.
        framing: override the dialect's framing (``"ndjson"`` for ``.jsonl``).
        limits: :class:`~streamflow.Limits` for the decoder and the read timeouts.
        buffer: events decoded ahead of the consumer before the read pauses.
        transforms: operators applied to the UniEvents before the sinks and the
            iteration, in order: pipeable operators or async generator functions over
            UniEvents (``async def f(events): async for e in events: yield e``).
        output: the structured output's type (a pydantic model, a ``TypeAdapter``-able
            type or a JSON schema dict): ``s.partial_output`` while it arrives,
            ``await s.final_output()`` validated at the end.
        output_from: where the output's JSON is: ``"text"`` (the answer, a Markdown
            fence tolerated), ``"tool"`` (the arguments of the tool call carrying it) or
            ``"auto"`` (the tool call when the answer is one tool call and no text).
        **options: passed to the dialect decoder.
    """
    return Stream(source, dialect=dialect, sinks=tuple(sinks), framing=framing, limits=limits,
                  buffer=buffer, options=options, transforms=transforms, output=output,
                  output_from=output_from)
