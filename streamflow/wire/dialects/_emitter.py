"""The :class:`Emitter`: the one writer of UniEvents every dialect decoder goes through.

It holds an :class:`~streamflow.core.message.Assembler` (the grammar of
:mod:`streamflow.core._grammar`, and the partial message at any moment) and a
:class:`~streamflow.core._budget.Budget` (the size and count limits). Its writing rules:
one item per delta event, a fragment of another kind closes the open group (the
grammar's :data:`~streamflow.core._grammar.WRITER_CLOSES`), ``.done`` items built from the
first fragment with the growing field replaced by everything the fragments carried,
tool arguments parsed strictly, limits checked before anything changes.
"""

from __future__ import annotations

from typing import Any

from ...core._budget import Budget
from ...core._grammar import STOP, STOPPED, TRANSITIONS, WRITER_CLOSES, refusal, symbol
from ...core.events import (
    CHOICE_FINISH_REASONS,
    USAGE_SO_FAR,
    ContentItem,
    FinishReason,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    is_done,
    join_fragments,
    kind_and_value,
    usage_to_dict,
)
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.message import Assembler, Message
from ...core.partial_json import parse_arguments
from ...core.urls import flag_provider


def merge_provider(into: JSONDict | None, more: JSONDict | None) -> JSONDict | None:
    """Merge provider slots of a group's fragments: lists concatenate, other values replace."""
    if not more:
        return into
    out = dict(into) if into else {}
    for key, value in more.items():
        old = out.get(key)
        if isinstance(old, list) and isinstance(value, list):
            out[key] = old + value
        else:
            out[key] = value
    return out


def _size(item: ContentItem, value: Any) -> int:
    return 8 * len(value) if item.kind == "embedding" else len(value)


class Emitter:
    """Writes the UniEvents of one message; its :attr:`assembler` keeps the assembled state.

    Dialects call :meth:`delta` (or the ``text``/``thinking``/``tool_call`` shortcuts),
    :meth:`close_group` at a block boundary, :meth:`note` for message-level data,
    :meth:`keep` for entries UniEvent has no kind for, and :meth:`stop` once; the
    ``uni`` dialect hands whole events to :meth:`forward`. Events collect in ``out``
    until the decoder drains them.
    """

    __slots__ = ("out", "now", "limits", "budget", "assembler", "_cause", "_fidelity",
                 "_provider", "_announced")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.out: list[UniEvent] = []
        self.now = 0
        self.limits = limits
        self.budget = Budget(limits)
        self.assembler = Assembler()
        self._fidelity: JSONDict | None = None
        self._provider: JSONDict | None = None
        self._announced = False
        self._cause = ""

    # -- state ----------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        """True once the stop event was written."""
        return self.assembler.stopped

    @property
    def open_kind(self) -> str | None:
        """The kind of the open group, if any."""
        return self.assembler.open_kind

    @property
    def message(self) -> Message:
        """The message written so far (partial until stop)."""
        return self.assembler.message

    def note(self, provider: JSONDict | None) -> None:
        """Merge message-level provider data (id, model...)."""
        self.assembler.note(provider)

    def ending(self, usage: Usage | None, finish_reason: FinishReason) -> None:
        """The provider said how it ends: a partial message carries ``usage`` (marked
        not final) and ``finish_reason`` from now on, and a tool call that then fails
        to parse names the cause when the provider stopped for ``length``."""
        self._ending(usage.so_far() if usage is not None else None, finish_reason)

    def _ending(self, usage: Usage | None, finish_reason: FinishReason) -> None:
        self.assembler.ending(usage, finish_reason)
        if finish_reason == "length":
            self._cause = "cut short: the provider stopped with finish_reason length"

    def counted(self, usage: Usage) -> None:
        """Counts the provider reported before its end (Anthropic's ``message_start``):
        a partial message carries them, marked not final; ``stop`` replaces them."""
        if not self.assembler.stopped:
            self.assembler.counted(usage.so_far())

    # -- groups ---------------------------------------------------------------
    def delta(self, item: ContentItem) -> None:
        """Emit one ``K.delta`` item, opening (and closing another) group as needed."""
        asm = self.assembler
        kind, value = kind_and_value(item)
        if asm.open_kind != kind:  # not grammar.GROWS: the table decides
            self._open(item, kind)
        # the limits checked before anything changes; the assembler takes the fragment
        # (its self-loop is the per-token path)
        self.budget.grow(8 * len(value) if kind == "embedding" else len(value),
                         kind == "tool_call")
        asm.fragment(item, kind, value, self.now)
        if item.fidelity is not None:
            fid = self._fidelity
            self._fidelity = {**fid, **item.fidelity} if fid else item.fidelity
        if item.provider is not None:
            self._provider = merge_provider(self._provider, item.provider)
        if self._announced:  # _emit_delta inlined: this runs once per token
            self.out.append(UniEvent("delta", [item], None, None, self.now, None))
        else:
            self._emit_delta(item)

    def _open(self, item: ContentItem, kind: str) -> None:
        """A fragment opening a group: close the open one when the grammar says a writer
        does (:data:`~streamflow.core._grammar.WRITER_CLOSES`), refuse what the table refuses."""
        asm = self.assembler
        sym = symbol(kind, False, asm.open_kind)
        if (asm.state, sym) in WRITER_CLOSES:
            self.close_group()
        elif (asm.state, sym) not in TRANSITIONS:
            raise refusal(asm.state, sym, what=item.type, kind=kind, open_kind=asm.open_kind)
        self.budget.open_group()  # checked before anything changes

    def text(self, text: str, provider: JSONDict | None = None) -> None:
        """Emit a ``text.delta`` fragment."""
        self.delta(TextItem("text.delta", text, None, provider))

    def thinking(self, thinking: str, fidelity: JSONDict | None = None,
                 provider: JSONDict | None = None) -> None:
        """Emit a ``thinking.delta`` fragment (a signature alone: ``thinking=""`` plus fidelity)."""
        self.delta(ThinkingItem("thinking.delta", thinking, fidelity, provider))

    def tool_call(self, arguments: str, name: str = "", tool_call_id: str = "",
                  provider: JSONDict | None = None, *, new: bool = False) -> None:
        """Emit a ``tool_call.delta``; ``new=True`` starts a new call even after another one."""
        if new and self.assembler.open_item is not None:
            self.close_group()
        self.delta(ToolCallItem("tool_call.delta", name, tool_call_id, arguments, None, provider))

    def close_group(self, cause: str = "") -> None:
        """Close the open group with its ``.done`` item (no-op when none is open).

        ``cause`` is added to a ``ToolCallArgumentParseError`` (why the text may be cut;
        by default the one :meth:`ending` knows).
        """
        asm = self.assembler
        first = asm.open_item
        if first is None:
            return
        if isinstance(first, ToolCallItem):
            # joined once: the text stands for the fragments from here on (the partial
            # message is the same if the parse fails), so they are freed before the
            # parsed object is built, not after
            asm.compact()
        done = join_fragments(first, asm.fragments, done=True)
        done.fidelity = self._fidelity
        done.provider = flag_provider(self._provider)  # unsafe citation URLs: url_flags
        if isinstance(done, ToolCallItem):
            done.arguments = parse_arguments(str(done.arguments), tool_call_id=done.tool_call_id,
                                             name=done.name, cause=cause or self._cause)
        self._fidelity = None
        self._provider = None
        self._write(UniEvent("delta", [done], None, None, self.now, self._announce()))

    def keep(self, key: str, value: Any) -> None:
        """Append ``value`` to the message-level list ``provider[key]`` (blocks and events
        UniEvent has no kind for). O(1) per call; each kept entry counts as a group
        against ``max_groups``, so a flood of unknown events cannot grow without bound.
        """
        self.budget.open_group()
        self.assembler.keep(key, value)

    def ride(self, extra: JSONDict) -> None:
        """Per-chunk provider data: merged into the provider slot of the events written
        since the last drain (the events of its chunk), else kept in ``provider["chunk_extras"]``.
        """
        if not self.out:
            self.keep("chunk_extras", extra)
            return
        for event in self.out:
            event.provider = {**event.provider, **extra} if event.provider else dict(extra)

    def _announce(self) -> JSONDict | None:
        """The first event carries the message's ``id`` and ``model``, and the counts
        reported so far (:data:`~streamflow.core.events.USAGE_SO_FAR`: an encoder writes them
        in its opening events)."""
        if self._announced:
            return None
        self._announced = True
        asm = self.assembler
        meta = asm.provider
        out: JSONDict = {k: meta[k] for k in ("id", "model") if k in meta}
        usage = asm.usage
        if usage is not None:
            out[USAGE_SO_FAR] = usage_to_dict(usage)
        return out or None

    def _emit_delta(self, item: ContentItem) -> None:
        self.out.append(UniEvent("delta", [item], None, None, self.now, self._announce()))

    def _write(self, event: UniEvent) -> None:
        self.assembler.feed(event)
        self.out.append(event)

    # -- message level --------------------------------------------------------
    def stop(self, usage: Usage | None, finish_reason: FinishReason,
             provider: JSONDict | None = None,
             choices: dict[str, FinishReason] | None = None) -> None:
        """Close the open group and emit the one ``stop`` event (with a usage that reports
        nothing when ``usage`` is None: the grammar's stop always carries one).

        ``choices`` is each choice's finish reason by its index (as a string: JSON keys),
        for a response with several (the stop event's ``provider["choice_finish_reasons"]``).
        """
        if self.assembler.stopped:
            raise refusal(STOPPED, STOP)
        self._ending(usage, finish_reason)
        self.close_group()
        self.note(provider)
        if choices:
            self.note({CHOICE_FINISH_REASONS: choices})
        meta = self.assembler.provider
        self._write(UniEvent("stop", [], usage if usage is not None else Usage(),
                             finish_reason, self.now, meta))

    def forward(self, event: UniEvent) -> None:
        """Write an event built elsewhere (the ``uni`` dialect): grammar and limits checked."""
        asm, budget = self.assembler, self.budget
        for item in event.content_items:
            if is_done(item):
                continue
            if asm.open_item is None and not asm.stopped:
                budget.open_group()
            budget.grow(_size(item, getattr(item, item.growing)), item.kind == "tool_call")
        self._write(event)

    def drain(self) -> list[UniEvent]:
        """Hand over the events written since the last drain."""
        out = self.out
        if out:
            self.out = []
        return out
