"""``with streamflow.stream_sync(...) as s``: the same stream object without an event loop.

::

    with streamflow.stream_sync(open("turn.sse", "rb"), sinks=[RenderSink()]) as s:
        for text in s.text_stream:
            print(text, end="")
    print(s.message.usage)

For sync sources: ``bytes``, an iterable of ``bytes`` (a file opened ``"rb"``
reads line by line), ``from_bytes``/``from_iterable``/``from_file``/``ReplaySource``,
a sync ``from_httpx(httpx.Client(), request)`` or a sync ``httpx.Response`` opened
with ``stream=True``. The body is pulled chunk by chunk as you iterate (the sans-IO
decoder in this thread, no reactivex scheduling), ``sinks`` are fed as ``run_sync``
feeds them, and leaving the block early closes the body (the HTTP response). An
observable that is not a sync byte source (a composed pipeline) is run to its end
first, then iterated.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, nullcontext
from types import GeneratorType, TracebackType
from typing import Any

from ...core.errors import StreamflowError
from ...core.events import ContentItem, TextItem, UniEvent, is_done
from ...core.limits import Limits
from ...core.message import Message
from ...core.structured import OutputFrom
from ...reactive.sinks.base import AsyncSink
from ...reactive.sources.iterables import SyncSource
from ...reactive.types import SinkLike, SourceLike
from ...wire.decoder import StreamDecoder
from ..runtime import Run
from .output import StructuredOutput

__all__ = ["SyncBlockStream", "SyncStream", "stream_sync"]


class SyncStream:
    """One streamed response read in this thread (see the module doc)."""

    def __init__(self, source: Any, *, dialect: str = "auto", sinks: tuple[Any, ...] = (),
                 framing: str | None = None, limits: Limits | None = None,
                 options: dict[str, Any] | None = None, output: Any = None,
                 output_from: OutputFrom = "auto") -> None:
        if any(isinstance(s, AsyncSink) for s in sinks):
            raise TypeError("an AsyncSink needs an event loop: use `streamflow.stream(...)`")
        self._run = Run(source, sinks, dialect=dialect, framing=framing, limits=limits,
                        options=options, caller="stream_sync()")
        self._source = self._run.source
        self._fan = self._run.fan
        self._pending: deque[tuple[UniEvent, str | None]] = deque()
        self._stack = ExitStack()
        self._chunks: Iterator[Any] | None = None
        self._decoder: StreamDecoder | None = None
        self._raised = False
        self._output = StructuredOutput(output, output_from, limits)
        self.last_event_id: str | None = None
        """The SSE id of the last event delivered (``None`` when the body has no ids)."""

    # -- context manager ---------------------------------------------------
    def __enter__(self) -> SyncStream:
        source = self._source
        if isinstance(source, SyncSource):  # pull its chunks ourselves, lazily
            try:  # an HTTP source sends its request here; a non-2xx answer is typed
                opened: AbstractContextManager[Iterable[bytes]] = source.opener()
                self._chunks = iter(self._stack.enter_context(opened))
            except Exception as error:
                failed = self._map(error)
                self._fan.on_error(failed)  # sinks hear of it, as with run_sync()
                self._stack.close()
                raise failed from None
            job = self._run
            self._decoder = job.make_decoder(job.dialect, job.framing or source.framing,
                                             job.limits, job.options, emit=self._emit)
        else:  # any other observable: run it to its end now (it must be synchronous)
            collected: list[Any] = []
            self._fan.add(_Collect(collected))
            self._run.start(None)
            if not self._fan.finished:
                raise TypeError("stream_sync() got an asynchronous source: use "
                                "`async with streamflow.stream(...)`")
            self._pending.extend((e, None) for e in collected)
            self._chunks = iter(())
            self._stack.enter_context(nullcontext())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool | None:
        left_early = not self._fan.finished
        try:
            if left_early:
                self._run.cancel("the stream block was left early")
        finally:
            if isinstance(self._chunks, GeneratorType):  # a generator of chunks: finish it
                self._chunks.close()
            self._stack.close()  # closes the body (the HTTP response)
        if exc is None and not left_early and not self._raised:
            self._settle()  # an error nobody read: never silent
        return None

    def _emit(self, event: UniEvent) -> None:
        self._fan.on_next(event)
        assert self._decoder is not None
        self._pending.append((event, self._decoder.last_event_id))

    def _pull(self) -> bool:
        """Decode the next chunk (False once the stream ended)."""
        if self._fan.finished or self._chunks is None:
            return False
        decoder = self._decoder
        if decoder is None:
            return False
        try:
            chunk = next(self._chunks, None)
        except Exception as error:  # the transport failed (a sync HTTP read...)
            failed = decoder.fail(self._map(error))
            if failed is None:  # the stream had stopped: it is complete
                self._fan.on_completed()
            else:
                self._fan.on_error(failed)
            return True
        try:
            if chunk is None:
                decoder.close()
                self._fan.on_completed()
            elif chunk:
                decoder.feed(bytes(chunk))
        except Exception as error:  # the body is bad: a typed error, partial attached
            self._fan.on_error(error)
        return True

    def _map(self, error: Exception) -> Exception:
        source = self._source
        if isinstance(error, StreamflowError) or not isinstance(source, SyncSource):
            return error
        return source.map_error(error)

    def _settle_quietly(self) -> Message | BaseException:
        if self._run.outcome is None:
            self._run.outcome = self._run.settle()
        return self._run.outcome

    def _settle(self) -> Message:
        outcome = self._settle_quietly()
        if isinstance(outcome, BaseException):
            self._raised = True
            raise self._output.failed(outcome)
        return outcome

    # -- reading -----------------------------------------------------------
    def __iter__(self) -> Iterator[UniEvent]:
        while True:
            while not self._pending:
                if not self._pull():
                    self.last_event_id = (self._decoder.last_event_id if self._decoder
                                          else None) or self.last_event_id
                    self._settle()
                    return
            event, self.last_event_id = self._pending.popleft()
            self._output.feed(event)
            yield event

    @property
    def text_stream(self) -> Iterator[str]:
        """The text deltas only, as ``str``."""
        for event in self:
            item = event.item
            if isinstance(item, TextItem) and item.type == "text.delta":
                yield item.text

    def blocks(self) -> Iterator[SyncBlockStream]:
        """One :class:`SyncBlockStream` (an iterator of items) per content group."""
        items = (event.content_items[0] for event in self if event.content_items)
        count = 0
        block: SyncBlockStream | None = None
        for item in items:
            if block is not None and not block.closed:
                block.take(item)  # the caller did not read the block: keep its state right
                continue
            block = SyncBlockStream(count, item, items)
            count += 1
            yield block

    @property
    def message(self) -> Message:
        """The assembled message: final once the stream ended, the partial one before."""
        return self._fan.message

    def final_message(self) -> Message:
        """Read the rest of the stream; the final message, or the typed error raised."""
        for _ in self:
            pass
        return self._settle()

    @property
    def partial_output(self) -> Any:
        """With ``output=T``: the output so far (see ``Stream.partial_output``)."""
        return self._output.snapshot

    def final_output(self) -> Any:
        """With ``output=T``: read the rest; the output validated strictly as a T."""
        return self._output.final(self.final_message())


class SyncBlockStream:
    """One content group's items, as an iterator (see ``BlockStream``)."""

    def __init__(self, index: int, head: ContentItem, items: Iterator[ContentItem]) -> None:
        self.index = index
        self.head = head
        self.kind: str = head.kind
        self.done: ContentItem | None = None
        self.closed = False
        self._items = items
        self._started = False

    def __repr__(self) -> str:
        return f"SyncBlockStream(index={self.index}, kind={self.kind!r})"

    def take(self, item: ContentItem) -> ContentItem:
        """Note ``item`` as read (sets ``done`` and ``closed`` on the ``.done`` item)."""
        if is_done(item):
            self.done, self.closed = item, True
        return item

    def __iter__(self) -> Iterator[ContentItem]:
        if not self._started:
            self._started = True
            yield self.take(self.head)
        while not self.closed:
            item = next(self._items, None)
            if item is None:
                self.closed = True
                return
            yield self.take(item)


class _Collect:
    """A sink keeping the UniEvents of a stream run to its end."""

    def __init__(self, out: list[Any]) -> None:
        self.out = out

    def on_next(self, value: Any) -> None:
        if type(value) is UniEvent:
            self.out.append(value)

    def on_error(self, error: Exception) -> None:
        """Nothing: the stream object raises it."""

    def on_completed(self) -> None:
        """Nothing."""


def stream_sync(source: SourceLike, *, dialect: str = "auto", sinks: Iterable[SinkLike] = (),
                framing: str | None = None, limits: Limits | None = None,
                output: Any = None, output_from: OutputFrom = "auto",
                **options: Any) -> SyncStream:
    """A :class:`SyncStream` over a sync ``source``, to use as ``with stream_sync(...) as s``.

    Args:
        source: ``bytes``, an iterable of ``bytes`` chunks, a sync streamflow source
            (``from_bytes``, ``from_file``, ``ReplaySource``, ``from_httpx`` with an
            ``httpx.Client``) or a sync ``httpx.Response`` opened with ``stream=True``.
        dialect: the source's dialect; ``"auto"`` detects it from the first event.
        sinks: sync sinks fed every item, exactly as ``streamflow.run_sync`` feeds them.
        framing: override the dialect's framing (``"ndjson"`` for ``.jsonl``).
        limits: :class:`~streamflow.Limits` for the decoder.
        output: the structured output's type, as for ``stream()`` (``s.partial_output``,
            ``s.final_output()``).
        output_from: ``"auto"``, ``"text"`` or ``"tool"``, as for ``stream()``.
        **options: passed to the dialect decoder.
    """
    return SyncStream(source, dialect=dialect, sinks=tuple(sinks), framing=framing,
                      limits=limits, options=options, output=output, output_from=output_from)
