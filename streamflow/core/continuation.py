"""One answer from several attempts: a continuation spliced into one UniEvent stream (sans-IO).

When a stream fails after it gave output -- cut, stalled, an overloaded error in-band --
a failover chain (:mod:`streamflow.app.failover`) asks again, of the same endpoint or
the next one and in any dialect, with the partial answer as the assistant's prefix,
and splices what comes back into the same stream. :class:`Continuation` is that
splice: fed each attempt's UniEvents (:meth:`~Continuation.feed`), it emits the
answer's, which keep the UniEvent grammar -- one stop, never a second, groups that never
interleave -- so every consumer reads one answer.

At a cut (:meth:`Continuation.cut`):

* **text is continued**: the open text group stays open and the next attempt's text
  goes on in it;
* **a group that cannot be continued is dropped** -- a tool call cut in its arguments,
  a thinking block cut before its signature, inline data -- and with it every tool
  call before it (a prefix cannot end in calls that have no results): one
  :class:`~streamflow.core.outcome.StreamRestart` notice with ``groups`` set says
  which, and the next attempt produces them whole. A cut that drops nothing still
  sends the notice (``groups=0``): sinks count the attempt;
* **what is kept is the prefix** of the next request: as the final assistant turn
  where the endpoint continues one (``prefill``: Anthropic, llama.cpp, DeepSeek's
  and Mistral's ``prefix``; its trailing whitespace trimmed, which Anthropic
  requires; never with thinking asked for, which no API prefills), else as an
  assistant turn followed by a user turn asking to go on (:data:`INSTRUCTION`).
  An answer with no text yet keeps nothing: every group is dropped and the request
  goes again as it was (a model asked again thinks again: its first thinking block
  would come twice).
* The next attempt's first text is trimmed of what repeats the answer: the whole
  prefix as sent, when the server echoes it before going on (llama.cpp does, after a
  prefill; a continuation that truly starts with the whole prefix again reads the
  same), then the whitespace the prefill lost; else the whitespace the prefill lost,
  or (instruction) a repeat of at least :data:`MIN_OVERLAP` characters of the last
  :data:`WINDOW`. It is held back until that can be told (:data:`WINDOW` characters, or
  as long as it still reads as the prefix) or its group ended.

The last attempt's stop ends the answer: its usage is the sum of every attempt's,
and its ``provider`` carries :data:`~streamflow.core.delivery.DELIVERY` (each
attempt, with its endpoint, id, model, usage and error; the time to the first token,
the gaps between chunks, the stalls). Each later attempt's ``id``, ``model`` and
early counts are kept in its record, not over the first's. A failure the chain does
not go past is returned by :meth:`Continuation.fail` with the answer's partial (not
the attempt's) and the delivery so far on it.

:class:`Holdback` is the other half, for a consumer that cannot take back what it was
given (an encoder writing a client's body, a queue read by ``async for``): it passes
text at once and holds each other group until it can no longer be dropped, so its
consumer only ever sees what stays.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from .delivery import DELIVERY, Cadence
from .errors import StreamflowError, StreamTimeoutError
from .events import (
    KINDS,
    USAGE_SO_FAR,
    ContentItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    UniEvent,
    Usage,
    choice_index,
    is_done,
    reported_usage,
    total_usage,
    usage_from_dict,
    usage_to_dict,
)
from .message import Assembler, Message
from .outcome import StreamRestart
from .requests import ChatRequest, Part, Turn

__all__ = ["INSTRUCTION", "MIN_OVERLAP", "WINDOW", "Continuation", "Holdback", "overlap"]

INSTRUCTION: Final = ("Your previous reply was cut off. Continue it exactly where it stopped, "
                      "without repeating anything already written and without mentioning "
                      "the interruption.")
"""The user turn after the partial answer where the endpoint cannot prefill it."""
WINDOW: Final = 64
"""The characters of the answer's end a continuation's first text is compared with."""
MIN_OVERLAP: Final = 4
"""The shortest repeat trimmed from a continuation asked for by instruction (shorter
ones are whitespace only)."""
_ATTEMPT_KEYS: Final = ("id", "model", USAGE_SO_FAR)


def overlap(tail: str, head: str, minimum: int) -> int:
    """How many first characters of ``head`` repeat the end of ``tail``: the longest
    prefix of ``head`` that ``tail`` ends with, counted when it is at least
    ``minimum`` characters long or only whitespace; else 0."""
    for k in range(min(len(tail), len(head)), 0, -1):
        if tail.endswith(head[:k]) and (k >= minimum or head[:k].isspace()):
            return k
    return 0


_DONE_TYPES: Final = frozenset(f"{kind}.done" for kind in KINDS)
"""The item types that close a group."""
_KIND_OF: Final = {f"{kind}.{step}": kind for kind in KINDS for step in ("delta", "done")}
"""An item type's kind (``"text.delta"``: ``"text"``)."""


def _kind(item: ContentItem) -> str:
    return _KIND_OF[item.type]


class Continuation:
    """The splice of one answer's attempts (see the module doc).

    ``request`` is the neutral request the answer was asked for; ``emit`` gets each of
    the answer's UniEvents and notices. Per attempt: :meth:`begin`, then
    :meth:`feed` each event its decoder gives; at a failure the chain goes past,
    :meth:`cut` (then :meth:`next_request` for the next attempt); at one it does not,
    :meth:`fail`. ``clock`` times the answer (:class:`~streamflow.core.delivery.Cadence`).
    """

    def __init__(self, request: ChatRequest, emit: Callable[[Any], object], *,
                 clock: Callable[[], float] = time.monotonic,
                 instruction: str = INSTRUCTION) -> None:
        self.request = request
        self.emit = emit
        self.clock = clock
        self.instruction = instruction
        self.assembler = Assembler()
        self.cadence = Cadence(clock())
        #: one record per attempt (see :mod:`streamflow.core.delivery`)
        self.attempts: list[JSONDict] = []
        self.stalls = 0
        self._usages: list[Usage | None] = []  # the failed attempts' counts
        self._starts: list[int] = []  # each group's first event, as an index in the answer
        self._events = 0  # delta events in the answer (what its consumers hold)
        self._record: JSONDict = {}
        self._seen = 0  # events of the attempt in progress
        self._open = False  # a group of the answer is open
        self._content = False  # a content fragment went out since the last chunk
        self._reading: Any = None  # what assembles the attempt in progress (its decoder)
        self._fresh = True  # no cut yet: the attempt's events are the answer's, its
        # decoder's message the answer's (nothing is assembled twice)
        self._merge = False  # the answer's open text goes on with the attempt's first text
        self._trimming = False  # the attempt's first text is still held for trimming
        self._head: list[TextItem] = []
        self._head_chars = 0
        self._unopened = False  # the attempt's first text group is all repeat so far
        self._trimmed = 0  # characters trimmed from the attempt's first text group
        self._tail = ""
        self._minimum = 1
        self._echo = ""  # the prefix as sent: an attempt may begin by repeating it whole
        self._echo_tail = ""  # what the text after such a repeat may repeat (a prefill's)
        self._echoing = False  # the attempt's first text may still be that repeat

    # -- reading ---------------------------------------------------------------
    @property
    def partial(self) -> Message:
        """The answer so far (what its consumers hold)."""
        if self._fresh and self._reading is not None:
            return self._reading.partial  # type: ignore[no-any-return]
        return self.assembler.message

    @property
    def has_output(self) -> bool:
        """True once the answer holds an event."""
        return self._events > 0

    def delivery(self) -> JSONDict:
        """The :data:`~streamflow.core.delivery.DELIVERY` object so far."""
        return {"attempts": [dict(a) for a in self.attempts], **self.cadence.to_dict(),
                "stalls": self.stalls}

    # -- attempts --------------------------------------------------------------
    def begin(self, endpoint: str, dialect: str, reading: Any, delay: float = 0.0) -> None:
        """An attempt starts at ``endpoint`` (its name), in ``dialect``, after ``delay`` s;
        ``reading`` is what assembles its events (its decoder: anything with a
        ``partial`` message), read as the answer's while no cut happened."""
        self._record = {"endpoint": endpoint, "dialect": dialect, "outcome": None,
                        "error": None, "usage": None, "id": None, "model": None,
                        "events": 0, "delay_s": round(delay, 6)}
        self.attempts.append(self._record)
        self._seen = 0
        self._reading = reading

    def chunk_done(self) -> None:
        """A chunk of the attempt was fed: one step of the answer's cadence when it
        carried content (the gaps are between chunks, as they reached the user)."""
        if self._content:
            self._content = False
            self.cadence.content(self.clock())

    @property
    def receiver(self) -> Callable[[UniEvent], None]:
        """What the attempt in progress's decoder emits to (:meth:`feed`, or, while no
        cut happened, straight to the answer: its events are the answer's)."""
        return self._pass if self._fresh else self.feed

    def feed(self, event: UniEvent) -> None:
        """One UniEvent of the attempt in progress."""
        if self._fresh:
            self._pass(event)
            return
        self._seen += 1
        self._splice(event)

    def cut(self, error: Exception, usage: Usage | None, *, attempt: int, delay: float,
            endpoint: str, notify: bool = True) -> StreamRestart | None:
        """The attempt in progress failed and the chain goes on with attempt number
        ``attempt`` at ``endpoint`` after ``delay`` s. ``usage`` is what the failed attempt
        reported. Returns the notice emitted (``None`` while the answer has no output;
        ``notify=False``: made, not emitted)."""
        self._settle()
        self._close(error, usage, None)
        if not self.has_output:
            return None
        self._take_over()
        assembler = self.assembler
        items = assembler.message.items
        kinds = [_kind(i) for i in items]
        keep = len(kinds)
        if assembler.open_kind not in (None, "text"):
            keep -= 1
        if "tool_call" in kinds:
            keep = min(keep, kinds.index("tool_call"))
        if not any(isinstance(i, TextItem) and i.text.strip() for i in items[:keep]):
            keep = 0  # no text: nothing to go on from (a thinking block would come twice)
        groups = len(kinds) - keep
        discard = self._events - self._starts[keep] if groups else 0
        assembler.drop(groups)
        del self._starts[keep:]
        self._events -= discard
        self._open = assembler.open_kind is not None
        self._merge = assembler.open_kind == "text"
        self._trimming = True
        self._head, self._head_chars, self._unopened = [], 0, False
        self._echoing = False
        notice = StreamRestart(error, attempt, discard, delay, groups=groups, endpoint=endpoint)
        if notify:
            self.emit(notice)
        return notice

    def take_over(self, events: list[UniEvent], error: Exception, *,
                  endpoint: str = "") -> StreamRestart | None:
        """The answer so far is ``events``, which another producer gave (its consumers
        have them) before it stopped with ``error``: they are the answer's, assembled
        here and not emitted again, and the answer goes on as after a cut, the next
        attempt at ``endpoint``; this run's consumers, who never had them, get no notice.
        Returns the cut's notice (``None``: no output yet)."""
        self._fresh = False
        self.begin("an earlier producer", "", None)
        for event in events:
            if event.content_items:
                self._seen += 1
                self._out(event, emit=False)
        return self.cut(error, None, attempt=2, delay=0.0, endpoint=endpoint, notify=False)

    def next_request(self, prefill: bool) -> ChatRequest:
        """The request of the next attempt: the original one, with what the answer kept
        as the assistant's prefix (``prefill``: as the final turn, else followed by
        :data:`INSTRUCTION`); a copy, which the caller may change."""
        request = self.request
        parts = self._prefix()
        text = "".join(p.text for p in parts if isinstance(p, TextItem))
        self._tail, self._minimum, self._echo, self._echo_tail = "", 1, "", ""
        if self._fresh or not text.strip():
            return replace(request, turns=list(request.turns), options=dict(request.options))
        if prefill and request.thinking is None:
            kept = text.rstrip()
            self._tail, self._minimum = text[len(kept):], len(text) + 1  # whitespace only
            self._echo, self._echo_tail = kept, self._tail
            turns = [*request.turns, Turn("assistant", [TextItem("text.done", kept)])]
        else:
            self._tail, self._minimum = text[-WINDOW:], MIN_OVERLAP
            self._echo = text
            turns = [*request.turns, Turn("assistant", parts), Turn.user(self.instruction)]
        self._echoing = True
        return replace(request, turns=turns, options=dict(request.options))

    def fail(self, error: Exception, usage: Usage | None) -> Exception:
        """The attempt in progress failed and the chain gives up: ``error`` with the
        answer's partial message (its :data:`~streamflow.core.delivery.DELIVERY`
        included), returned for the caller to raise."""
        self._settle()
        self._close(error, usage, "failed")
        self._take_over()
        if isinstance(error, StreamflowError):
            self.assembler.note({DELIVERY: self.delivery()})
            error.partial = None  # the attempt's decoder attached the attempt's: the answer's
            error.attach(self.partial)
        return error

    # -- the answer ------------------------------------------------------------
    def _take_over(self) -> None:
        """From now on the answer is assembled here (from what the attempt's decoder
        assembled, the first time)."""
        if self._fresh:
            self._fresh = False
            if self._reading is not None:
                self.assembler = Assembler.resume(self._reading.partial)

    def _pass(self, event: UniEvent, emit: bool = True) -> None:
        """Count one of the answer's events and emit it (the per-token path: what the
        first attempt's decoder emits to until a cut; its decoder assembles it);
        ``emit=False``: one its consumers already have."""
        items = event.content_items
        if not items:  # the stop
            self._stop(event)
            return
        if items[0].type in _DONE_TYPES:
            self._open = False
        else:
            if not self._open:
                self._open = True
                self._starts.append(self._events)
            self._content = emit
        self._events += 1
        if emit:
            self.emit(event)

    def _out(self, event: UniEvent, emit: bool = True) -> None:
        """:meth:`_pass`, after a cut: the answer is assembled here."""
        if event.content_items:  # (the stop is assembled by _stop)
            self.assembler.feed(event)
        self._pass(event, emit)

    def _stop(self, event: UniEvent) -> None:
        record = self._record
        usage = reported_usage(event.usage_metadata)
        self._read_attempt()
        record["outcome"] = "stop"
        record["usage"] = usage_to_dict(usage)
        if len(self.attempts) > 1:
            usage = total_usage([*self._usages, usage])
        self.chunk_done()
        provider = dict(event.provider or {})
        provider[DELIVERY] = self.delivery()
        stop = UniEvent("stop", [], usage or Usage(), event.finish_reason, event.created_at,
                        provider)
        self._take_over()
        self.assembler.feed(stop)
        self.emit(stop)

    def _note(self, provider: JSONDict) -> None:
        """An attempt's first provider data: its id and model, and its early counts."""
        record = self._record
        for key in ("id", "model"):
            if isinstance(provider.get(key), str) and record[key] is None:
                record[key] = provider[key]
        early = provider.get(USAGE_SO_FAR)
        if isinstance(early, dict):
            record["usage"] = early

    def _read_attempt(self) -> None:
        """The attempt's event count, and (of one whose events were the answer's as they
        came) its id, model and early counts, read from what assembled it."""
        record = self._record
        if not self._fresh:
            record["events"] = self._seen
            return
        record["events"] = self._events
        if self._reading is not None:
            partial = self._reading.partial
            record["id"], record["model"] = partial.id, partial.model
            if partial.usage is not None and record["usage"] is None:
                record["usage"] = usage_to_dict(partial.usage)

    def _close(self, error: Exception, usage: Usage | None, outcome: str | None) -> None:
        """The attempt in progress ended with ``error``: ``outcome``, or (``None``) ``"cut"``
        when it gave events and ``"failed"`` when it gave none."""
        record = self._record
        self._read_attempt()
        if outcome is None:
            outcome = "cut" if record["events"] else "failed"
        usage = reported_usage(usage)
        if usage is None and isinstance(record.get("usage"), dict):
            usage = usage_from_dict(record["usage"])
        record["outcome"] = outcome
        record["usage"] = usage_to_dict(usage)
        record["error"] = {"type": type(error).__name__,
                           "message": getattr(error, "message", None) or str(error)}
        self._usages.append(usage)
        if isinstance(error, StreamTimeoutError) and error.kind in ("idle", "first_chunk"):
            self.stalls += 1

    def _prefix(self) -> list[Part]:
        """What the answer kept, as an assistant turn's parts (the open text as done)."""
        parts: list[Part] = []
        for item in self.assembler.message.items:
            if choice_index(item):
                continue
            if isinstance(item, TextItem):
                parts.append(TextItem("text.done", item.text, item.fidelity, item.provider))
            elif isinstance(item, (ThinkingItem, InlineThinkingItem)) and is_done(item):
                parts.append(item)
        return parts

    # -- the splice of an attempt after a cut ----------------------------------
    def _splice(self, event: UniEvent) -> None:
        provider = event.provider
        if provider and any(k in provider for k in _ATTEMPT_KEYS):
            self._note(provider)
            kept = {k: v for k, v in provider.items() if k not in _ATTEMPT_KEYS}
            event = UniEvent(event.event_type, event.content_items, event.usage_metadata,
                             event.finish_reason, event.created_at, kept or None)
        if event.event_type == "stop":
            self._settle()
            self._close_merge()
            self._out(event)
            return
        item = event.content_items[0]
        if _kind(item) != "text":
            if item.type.endswith(".delta") and self.assembler.open_kind != _kind(item):
                self._close_merge()  # another group starts: the answer's text is whole
            self._out(event)
            return
        if self._trimming:
            if not is_done(item):
                assert isinstance(item, TextItem)
                self._hold(item)
                return
            self._settle()
        if self._unopened:  # the attempt's first text group, nothing new in it so far
            if is_done(item):
                self._unopened = False  # it only repeated the answer: left out
                self._trimmed = 0
                return
            if not item.text:  # type: ignore[union-attr]
                return
            self._unopened = False  # this fragment opens it
        if is_done(item):
            assert isinstance(item, TextItem)
            if self._merge:
                self._merge = False
                item = replace(item, text=self.assembler.compact())
            elif self._trimmed:
                item = replace(item, text=item.text[self._trimmed:])
            self._trimmed = 0
        self._out(event if item is event.content_items[0] else
                  UniEvent("delta", [item], created_at=event.created_at,
                           provider=event.provider))

    def _hold(self, item: TextItem) -> None:
        """Hold a fragment of the attempt's first text until what it repeats can be told:
        the whole prefix as sent (a server that echoes a prefill), or the answer's end."""
        start = self._head_chars
        self._head.append(item)
        self._head_chars += len(item.text)
        echo = self._echo
        if self._echoing:  # the fragment against the prefix where it would fall
            self._echoing = echo[start:].startswith(item.text[:max(0, len(echo) - start)])
        if self._echoing and self._head_chars < len(echo) + len(self._echo_tail):
            return  # the prefix again, maybe: wait (and for the whitespace after it)
        if self._head_chars >= max(len(self._tail), 1) or self._echoing:
            self._settle()

    def _settle(self) -> None:
        """Emit the held first text of the attempt, trimmed of what it repeats."""
        if not self._trimming or not self._head:
            return
        head, self._head = self._head, []
        self._head_chars = 0
        self._trimming = False
        text = "".join(h.text for h in head)
        if self._echo and text.startswith(self._echo):  # the prefix repeated whole
            rest = text[len(self._echo):]
            self._trimmed = len(self._echo) + overlap(self._echo_tail, rest, len(rest) + 1)
        elif self._echoing and self._echo.startswith(text):  # its start, then cut short
            self._trimmed = len(text)
        else:
            self._trimmed = overlap(self._tail, text, self._minimum)
        rest = text[self._trimmed:]
        if rest:
            self._out(UniEvent("delta", [replace(head[0], text=rest)]))
        elif not self._merge:  # a new group opens with its first new character
            self._unopened = True

    def _close_merge(self) -> None:
        """End the answer's open text (another group comes, or the answer ends)."""
        if self._merge:
            self._merge = False
            text = self.assembler.compact()
            first = self.assembler.open_item
            assert isinstance(first, TextItem)
            self._out(UniEvent("delta", [replace(first, type="text.done", text=text)]))


class Holdback:
    """A continuing stream for an observer that cannot take back what it got.

    What a continuation may drop is held back until it no longer can be: the answer's
    first groups until its first text (an answer with no text yet is asked again
    whole), each later thinking block or inline data until its ``.done``, and a tool
    call and everything after it until the stop event (a later cut drops every tool
    call of the answer). Text after the first passes at once. A continuation's notice
    drops the held events it names; the stop, an error or the end flush the rest first,
    so the observer sees at the end what it would have seen without the hold. Every
    item, notices included, goes on to ``target`` in order (a continuation's notice as
    dropping nothing: what it drops never reached the target).
    """

    __slots__ = ("target", "sink", "_next", "_held", "_calls", "_text")

    def __init__(self, target: Any) -> None:
        self.target = target
        self._next: Callable[[Any], None] = target.on_next
        #: what :class:`~streamflow.reactive.sinks.SinkError` names if the target fails
        self.sink = getattr(target, "sink", target)
        self._held: list[UniEvent] = []
        self._calls = False  # a tool call is held: hold everything until the stop
        self._text = False  # the answer has text: what came before it stays

    def on_next(self, value: Any) -> None:
        """One item of the stream (see the class doc)."""
        if self._text and type(value) is UniEvent:
            items = value.content_items
            if items and type(items[0]) is TextItem and not self._held:
                self._next(value)  # text flowing: the common case
                return
        if type(value) is not UniEvent:
            if isinstance(value, StreamRestart) and not value.whole:
                held = self._held
                del held[max(0, len(held) - value.discard):]
                self._calls = any(_kind(e.content_items[0]) == "tool_call" for e in held)
                value = replace(value, discard=0, groups=0)  # the target got none of them
            self._next(value)
            return
        if value.event_type == "stop":
            self._flush()
            self._next(value)
            return
        item = value.content_items[0]
        kind = _KIND_OF[item.type]
        if self._calls or kind == "tool_call":
            self._calls = True
            self._held.append(value)
        elif not self._text:
            self._held.append(value)
            if isinstance(item, TextItem) and item.text.strip():
                self._text = True
                self._flush()
        elif kind != "text":
            self._held.append(value)
            if is_done(item):
                self._flush()
        elif self._held:
            self._held.append(value)
        else:
            self._next(value)

    def _flush(self) -> None:
        held, self._held = self._held, []
        self._calls = False
        for event in held:
            self._next(event)

    def on_error(self, error: Exception) -> None:
        """Release what is held, then the error."""
        self._flush()
        self.target.on_error(error)

    def on_completed(self) -> None:
        """Release what is held, then the end."""
        self._flush()
        self.target.on_completed()
