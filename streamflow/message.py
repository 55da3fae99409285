"""The assembled message and the assembler that builds it from UniEvents.

:class:`Assembler` is sans-IO: feed it UniEvents in order; read :attr:`Assembler.message`
at any time. Before the stop event that message is *partial*: its ``items`` are the
``.done`` items so far plus, last, the open group merged into one ``.delta`` item
(so an unfinished answer is never lost, and never mistaken for a finished one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import ProtocolError
from .events import (
    ContentItem,
    FinishReason,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    item_to_dict,
    join_fragments,
    usage_to_dict,
)

__all__ = ["Message", "Assembler"]


@dataclass(slots=True)
class Message:
    """A whole (or partial) assistant message: the ``.done`` items in stream order.

    ``provider`` merges every event-level provider slot (id, model, raw stop reason,
    cost, server-tool blocks...). ``complete`` is True once the stop event arrived.
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

    @property
    def text(self) -> str:
        """All answer text, concatenated."""
        return "".join(i.text for i in self.items if isinstance(i, TextItem))

    @property
    def thinking(self) -> str:
        """All visible reasoning, concatenated."""
        return "".join(i.thinking for i in self.items if isinstance(i, ThinkingItem))

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        """The finished tool calls, in call order."""
        return [i for i in self.items if isinstance(i, ToolCallItem) and i.type == "tool_call.done"]

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


class Assembler:
    """Builds a :class:`Message` from UniEvents, enforcing the grammar as it goes.

    Raises :class:`~streamflow.errors.ProtocolError` for events after ``stop``, a
    ``delta`` without exactly one item, a ``.done`` with no group open or of another
    kind than the open group, or ``stop`` while a group is open. Cost is linear:
    fragments of the open group are kept in a list and joined only when a partial
    message is asked for.
    """

    __slots__ = ("_items", "_open", "_parts", "_meta", "_usage", "_finish", "_created", "_stopped")

    def __init__(self) -> None:
        self._items: list[ContentItem] = []
        self._open: ContentItem | None = None
        self._parts: list[Any] = []
        self._meta: JSONDict = {}
        self._usage: Usage | None = None
        self._finish: FinishReason | None = None
        self._created: int | None = None
        self._stopped = False

    @property
    def stopped(self) -> bool:
        """True once the stop event was fed."""
        return self._stopped

    def note(self, provider: JSONDict | None) -> None:
        """Merge message-level provider data (id, model...) known before any event."""
        if provider:
            self._meta.update(provider)

    def feed(self, event: UniEvent) -> None:
        """Take the next event of the stream (a rejected event changes nothing)."""
        if self._stopped:
            raise ProtocolError("event after stop")
        open_ = self._open
        done = False
        if event.event_type == "stop":
            if event.content_items:
                raise ProtocolError("stop event carries items")
            if open_ is not None:
                raise ProtocolError(f"stop while a {open_.kind} group is open")
            item = None
        else:
            items = event.content_items
            if len(items) != 1:
                raise ProtocolError(f"delta event with {len(items)} items")
            item = items[0]
            done = item.type.endswith(".done")
            if done and open_ is None:
                raise ProtocolError(f"{item.type} without a {item.kind}.delta before it")
            if open_ is not None and open_.kind != item.kind:
                raise ProtocolError(f"{item.type} while a {open_.kind} group is open")
        if self._created is None:
            self._created = event.created_at
        if event.provider:
            self._meta.update(event.provider)
        if item is None:
            self._usage = event.usage_metadata
            self._finish = event.finish_reason
            self._stopped = True
        elif done:
            self._items.append(item)
            self._open = None
            self._parts = []
        else:
            if open_ is None:
                self._open = item
            self._parts.append(getattr(item, item.growing))

    @property
    def message(self) -> Message:
        """The message so far (final once stopped; see the module doc for partial form)."""
        items = list(self._items)
        if self._open is not None:
            items.append(join_fragments(self._open, self._parts, done=False))
        meta: JSONDict = {k: list(v) if isinstance(v, list) else v for k, v in self._meta.items()}
        return Message(
            items=items,
            usage_metadata=self._usage,
            finish_reason=self._finish,
            id=_str_or_none(meta.get("id")),  # a hostile non-string stays in provider only
            model=_str_or_none(meta.get("model")),
            created_at=self._created,
            provider=meta,
            complete=self._stopped,
        )
