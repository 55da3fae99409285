"""The assembled message and the assembler that builds it from UniEvents.

:class:`Assembler` is sans-IO: feed it UniEvents in order; read :attr:`Assembler.message`
at any time. Before the stop event that message is *partial*: its ``items`` are the
``.done`` items so far plus, last, the open group merged into one ``.delta`` item
(so an unfinished answer is never lost, and never mistaken for a finished one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from mypy_extensions import mypyc_attr

from ._grammar import IDLE, STOP, STOPPED, items_refusal, step, symbol
from .delivery import DELIVERY
from .events import (
    CHOICE_FINISH_REASONS,
    FINISH_REASONS,
    USAGE_SO_FAR,
    ContentItem,
    FinishReason,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    choice_index,
    is_done,
    item_to_dict,
    join_fragments,
    kind_and_value,
    reported_usage,
    usage_so_far,
    usage_to_dict,
)

__all__ = ["PACK", "Assembler", "Message", "append_packed"]

PACK: Final = 64
"""Text (or bytes) fragments of an open group joined into one block (memory, not speed)."""


@dataclass(slots=True)
class Message:
    """A whole (or partial) assistant message: the ``.done`` items in stream order.

    ``provider`` merges every event-level provider slot (id, model, raw stop reason,
    cost, server-tool blocks...). ``complete`` is True once the stop event arrived.

    Several choices (OpenAI's ``n``, Gemini's ``candidateCount``): ``items`` holds every
    choice's items in stream order (choice 0 first, the others tagged with their index,
    see :func:`~streamflow.core.events.choice_index`); :attr:`choices` keeps them apart, one
    message per choice, as the SDKs do, and :attr:`text`, :attr:`thinking` and
    :attr:`tool_calls` read the first choice (those of a message of :attr:`choices`, its
    own: ``choice_index`` is its index, 0 for the whole message).
    """

    items: list[ContentItem] = field(default_factory=list)
    usage_metadata: Usage | None = None
    finish_reason: FinishReason | None = None
    id: str | None = None
    model: str | None = None
    created_at: int | None = None
    provider: JSONDict = field(default_factory=dict)
    complete: bool = False
    role: str = "assistant"
    choice_index: int = 0

    @property
    def delivery(self) -> JSONDict | None:
        """How the answer was delivered -- its attempts, the time to its first token, the
        gaps between chunks, the stalls (:mod:`streamflow.core.delivery`) -- for a stream
        read through a failover chain; ``None`` otherwise."""
        value = self.provider.get(DELIVERY)
        return value if type(value) is dict else None

    @property
    def usage(self) -> Usage | None:
        """The token counts and cost: the same object as :attr:`usage_metadata`;
        ``None`` when the provider reported none (as the SDKs give it)."""
        return self.usage_metadata

    @property
    def text(self) -> str:
        """The answer text of the first choice (of this one, in :attr:`choices`), joined."""
        own = self.choice_index
        return "".join(i.text for i in self.items
                       if isinstance(i, TextItem) and choice_index(i) == own)

    @property
    def thinking(self) -> str:
        """The visible reasoning of the first choice (of this one, in :attr:`choices`)."""
        own = self.choice_index
        return "".join(i.thinking for i in self.items
                       if isinstance(i, ThinkingItem) and choice_index(i) == own)

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        """The finished tool calls of the first choice (of this one, in :attr:`choices`)."""
        own = self.choice_index
        return [i for i in self.items if isinstance(i, ToolCallItem)
                and i.type == "tool_call.done" and choice_index(i) == own]

    @property
    def choices(self) -> list[Message]:
        """One message per choice, in index order: ``[self]`` for one choice.

        Each holds its choice's items, its finish reason (the stop event's
        ``provider["choice_finish_reasons"]``) and its ``choice_index``; ``usage``, ``id``,
        ``model``, ``created_at``, ``provider`` and ``complete`` are the whole
        response's (the APIs report one usage for all choices).
        """
        by_choice: dict[int, list[ContentItem]] = {}
        for item in self.items:
            by_choice.setdefault(choice_index(item), []).append(item)
        if not by_choice.keys() - {0}:
            return [self]
        by_choice.setdefault(0, [])
        reasons = self.provider.get(CHOICE_FINISH_REASONS)
        if type(reasons) is not dict:
            reasons = {}
        out = []
        for index in sorted(by_choice):
            if index == 0:
                reason: Any = self.finish_reason
            else:
                reason = reasons.get(str(index))
                if reason not in FINISH_REASONS:
                    reason = None
            out.append(Message(by_choice[index], self.usage_metadata, reason, self.id,
                               self.model, self.created_at, self.provider, self.complete,
                               self.role, index))
        return out

    def choice(self, index: int = 0) -> Message:
        """The message of choice ``index`` (:attr:`choices`; ``self`` for a message of one
        choice): what an assistant turn sends back (``choice(0)``, as an SDK user sends
        ``choices[0].message``). A choice that never came is an empty message."""
        for message in self.choices:
            if message.choice_index == index:
                return message
        return Message([], self.usage_metadata, None, self.id, self.model, self.created_at,
                       self.provider, self.complete, self.role, index)

    def to_dict(self) -> JSONDict:
        """The JSON form printed by ``streamflow inspect --json``."""
        return {
            "id": self.id,
            "model": self.model,
            "role": self.role,
            "items": [item_to_dict(i) for i in self.items],
            "usage_metadata": usage_to_dict(self.usage_metadata),
            "finish_reason": self.finish_reason,
            "created_at": self.created_at,
            "complete": self.complete,
            "provider": self.provider,
        }


def _str_or_none(value: Any) -> str | None:
    return value if type(value) is str else None


def append_packed(parts: list[Any], value: Any, loose: int) -> int:
    """Append ``value`` to ``parts``, whose last ``loose`` entries are single fragments;
    every :data:`PACK` of them (``str`` or ``bytes``) are joined into one block. Returns
    the new ``loose``. The join of ``parts`` is unchanged; memory follows the text."""
    parts.append(value)
    loose += 1
    if loose < PACK:
        return loose
    kind = type(value)
    if kind is str:
        parts[-PACK:] = ["".join(parts[-PACK:])]
    elif kind is bytes:
        parts[-PACK:] = [b"".join(parts[-PACK:])]
    return 0


@mypyc_attr(allow_interpreted_subclasses=True)  # public: users may subclass it
class Assembler:
    """Builds a :class:`Message` from UniEvents, stepping through :mod:`streamflow.core._grammar`.

    Raises :class:`~streamflow.core.errors.ProtocolError` for what the grammar table
    refuses: events after ``stop``, a ``.done`` with no group open or of another kind
    than the open group, a fragment of another kind while a group is open, ``stop``
    while a group is open, and for a ``delta`` without exactly one item or a ``stop``
    with items. A rejected event changes nothing. Cost is linear: fragments of the
    open group are kept in a list and joined only when a partial message is asked for.
    Memory stays near the text's own size: every :data:`PACK` text (or bytes) fragments
    are joined into one block (a 1-10 character ``str`` costs ~50 bytes of header).
    """

    __slots__ = ("_items", "open_item", "open_kind", "fragments", "_loose", "_meta", "_usage",
                 "_finish", "_created", "state")

    def __init__(self) -> None:
        self._items: list[ContentItem] = []
        #: the first fragment of the open group (``None`` between groups); read-only
        self.open_item: ContentItem | None = None
        #: the kind of the open group (``None`` between groups); read-only
        self.open_kind: str | None = None
        #: the growing-field values of the open group so far, in order (text and bytes
        #: fragments joined into blocks of up to PACK); read-only
        self.fragments: list[Any] = []
        self._loose = 0  # fragments at the end of ``fragments`` not packed into a block yet
        self._meta: JSONDict = {}
        self._usage: Usage | None = None
        self._finish: FinishReason | None = None
        self._created: int | None = None
        #: the grammar state: ``"idle"``, ``"open"`` or ``"stopped"``
        self.state: str = IDLE

    @classmethod
    def resume(cls, message: Message) -> Assembler:
        """An assembler holding ``message`` (a partial one: its last item, a ``.delta``,
        is the open group; its provider, usage and creation time kept) that goes on from
        there: the stop event, or more groups (a continuation takes over the message an
        attempt's decoder assembled). A complete message's stop is not kept."""
        out = cls()
        items = list(message.items)
        if items and not is_done(items[-1]):
            last = items.pop()
            out.open_item = last
            out.open_kind, value = kind_and_value(last)
            out.fragments = [value]
            out._loose = 1
            out.state = step(IDLE, symbol(out.open_kind, False, None), what=last.type,
                             kind=out.open_kind, open_kind=None)
        out._items = items
        out._meta = dict(message.provider)
        out._usage = message.usage_metadata if not message.complete else None
        out._created = message.created_at
        return out

    @property
    def stopped(self) -> bool:
        """True once the stop event was fed."""
        return self.state is STOPPED

    @property
    def provider(self) -> JSONDict:
        """A copy of the message-level provider slot so far (lists copied too)."""
        return {k: list(v) if isinstance(v, list) else v for k, v in self._meta.items()}

    def note(self, provider: JSONDict | None) -> None:
        """Merge message-level provider data (id, model...) known before any event."""
        if provider:
            self._meta.update(provider)

    def keep(self, key: str, value: Any) -> None:
        """Append ``value`` to the message-level provider list ``key`` (O(1))."""
        kept = self._meta.get(key)
        if isinstance(kept, list):
            kept.append(value)
        else:
            self._meta[key] = [value]

    def ending(self, usage: Usage | None, finish_reason: FinishReason | None) -> None:
        """Usage and finish reason known before ``stop`` (a partial message shows them)."""
        self._usage = usage
        self._finish = finish_reason

    def counted(self, usage: Usage) -> None:
        """Usage known before ``stop`` (a partial message shows it; ``stop`` replaces it)."""
        self._usage = usage

    @property
    def usage(self) -> Usage | None:
        """The usage so far: the counts reported before ``stop`` (not final), then the
        stop event's (``None`` when the provider reported none)."""
        return self._usage

    def _note_event(self, provider: JSONDict, delta: bool) -> None:
        """An event's provider slot: merged into the message's, except the counts so far
        (:data:`~streamflow.core.events.USAGE_SO_FAR`), which a delta event's gives the partial
        message as its usage."""
        if USAGE_SO_FAR in provider:
            usage = usage_so_far(provider) if delta else None
            if usage is not None:
                self._usage = usage
            provider = {k: v for k, v in provider.items() if k != USAGE_SO_FAR}
        self._meta.update(provider)

    def compact(self) -> str:
        """Join the open group's text fragments into one (the partial message is unchanged)."""
        text = "".join(self.fragments)
        self.fragments = [text]
        self._loose = 0
        return text

    def append_fragment(self, value: Any) -> None:
        """Add a fragment's growing-field value to the open group (the writer's per-token
        path: the group's first fragment took the grammar step)."""
        self._loose = append_packed(self.fragments, value, self._loose)

    def fragment(self, item: ContentItem, kind: str, value: Any, created_at: int) -> None:
        """Take the ``K.delta`` ``item`` of ``kind`` whose growing field is ``value`` (the
        writer's path: the writer read both with :func:`~streamflow.core.events.kind_and_value`)."""
        if self.open_kind == kind:  # grammar.GROWS, the (OPEN, DELTA) self-loop: no step
            self._loose = append_packed(self.fragments, value, self._loose)
            return
        self.state = step(self.state, symbol(kind, False, self.open_kind),
                          what=item.type, kind=kind, open_kind=self.open_kind)
        if self._created is None:
            self._created = created_at
        self.open_item = item
        self.open_kind = kind
        self.fragments = [value]
        self._loose = 1

    def feed(self, event: UniEvent) -> None:
        """Take the next event of the stream (a rejected event changes nothing)."""
        items = event.content_items
        if event.event_type == "stop":
            if items and self.state is not STOPPED:
                raise items_refusal("stop", len(items))
            nxt = step(self.state, STOP, what="stop", open_kind=self.open_kind)
            # the grammar's stop always carries a usage; one that reports nothing is None
            self._usage = reported_usage(event.usage_metadata)
            self._finish = event.finish_reason
            item = None
        else:
            if len(items) != 1:
                raise items_refusal("delta", len(items))
            item = items[0]
            kind, value = kind_and_value(item)
            if not is_done(item):  # a fragment: the one path that takes it (the self-loop)
                self.fragment(item, kind, value, event.created_at)
                if event.provider:
                    self._note_event(event.provider, True)
                return
            nxt = step(self.state, symbol(kind, True, self.open_kind), what=item.type,
                       kind=kind, open_kind=self.open_kind)
        if self._created is None:
            self._created = event.created_at
        if event.provider:
            self._note_event(event.provider, item is not None)
        self.state = nxt
        if item is not None:  # (OPEN, DONE): the group's item, closed
            self._items.append(item)
            self.open_item = None
            self.open_kind = None
            self.fragments = []
            self._loose = 0

    def drop(self, groups: int) -> None:
        """Take back the last ``groups`` content groups, the open one counted (a
        continuation's :class:`~streamflow.core.outcome.StreamRestart`); what came before
        stays, and the stream goes on from there. ``ValueError`` after ``stop`` or for
        more groups than there are."""
        if groups <= 0:
            return
        if self.state is STOPPED:
            raise ValueError("a stopped message's groups cannot be dropped")
        if self.open_item is not None:
            self.open_item = None
            self.open_kind = None
            self.fragments = []
            self._loose = 0
            self.state = IDLE
            groups -= 1
        if groups > len(self._items):
            raise ValueError(f"cannot drop {groups} more groups: the message has "
                             f"{len(self._items)}")
        if groups:
            del self._items[-groups:]

    @property
    def message(self) -> Message:
        """The message so far (final once stopped; see the module doc for partial form)."""
        items = list(self._items)
        if self.open_item is not None:
            items.append(join_fragments(self.open_item, self.fragments, done=False))
        meta = self.provider
        return Message(
            items=items,
            usage_metadata=self._usage,
            finish_reason=self._finish,
            id=_str_or_none(meta.get("id")),  # a hostile non-string stays in provider only
            model=_str_or_none(meta.get("model")),
            created_at=self._created,
            provider=meta,
            complete=self.state is STOPPED,
        )
