"""The content items of a UniEvent: one small slotted dataclass per item kind.

Re-exported by :mod:`streamflow.core.events` (import them from there). Compiled by mypyc
in the compiled build: the per-token path builds these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Final, Literal

EventType = Literal["delta", "stop"]
FinishReason = Literal["stop", "length", "tool_call", "unknown"]
FINISH_REASONS: Final[tuple[str, ...]] = ("stop", "length", "tool_call", "unknown")
KINDS: Final[tuple[str, ...]] = (
    "text",
    "thinking",
    "tool_call",
    "inline_data",
    "inline_thinking",
    "embedding",
)
JSONDict = dict[str, Any]


# ``kind`` and ``growing`` are class attributes of a small base per item type, not
# ClassVars of the dataclass: compiled by mypyc, a ClassVar inside a dataclass becomes
# an instance field. The hot item types write their ``__init__`` out (the dataclass
# one stays interpreted code under mypyc, ~3x slower to call); ``repr``/``==``/
# ``fields()``/``replace()`` are the dataclass ones either way.


class _Text:
    __slots__ = ()
    kind: ClassVar[str] = "text"
    growing: ClassVar[str] = "text"


class _Thinking:
    __slots__ = ()
    kind: ClassVar[str] = "thinking"
    growing: ClassVar[str] = "thinking"


class _ToolCall:
    __slots__ = ()
    kind: ClassVar[str] = "tool_call"
    growing: ClassVar[str] = "arguments"


class _InlineData:
    __slots__ = ()
    kind: ClassVar[str] = "inline_data"
    growing: ClassVar[str] = "data"


class _InlineThinking:
    __slots__ = ()
    kind: ClassVar[str] = "inline_thinking"
    growing: ClassVar[str] = "data"


class _Embedding:
    __slots__ = ()
    kind: ClassVar[str] = "embedding"
    growing: ClassVar[str] = "embedding"


@dataclass(slots=True)
class TextItem(_Text):
    """A fragment (``text.delta``) or the whole (``text.done``) of visible answer text."""

    type: Literal["text.delta", "text.done"] = "text.delta"
    text: str = ""
    fidelity: JSONDict | None = None
    provider: JSONDict | None = None

    def __init__(self, type: Literal["text.delta", "text.done"] = "text.delta", text: str = "",
                 fidelity: JSONDict | None = None, provider: JSONDict | None = None) -> None:
        self.type = type
        self.text = text
        self.fidelity = fidelity
        self.provider = provider


@dataclass(slots=True)
class ThinkingItem(_Thinking):
    """A fragment or the whole of visible reasoning; signatures ride in ``fidelity``."""

    type: Literal["thinking.delta", "thinking.done"] = "thinking.delta"
    thinking: str = ""
    fidelity: JSONDict | None = None
    provider: JSONDict | None = None

    def __init__(self, type: Literal["thinking.delta", "thinking.done"] = "thinking.delta",
                 thinking: str = "", fidelity: JSONDict | None = None,
                 provider: JSONDict | None = None) -> None:
        self.type = type
        self.thinking = thinking
        self.fidelity = fidelity
        self.provider = provider


@dataclass(slots=True)
class ToolCallItem(_ToolCall):
    """A tool call: ``arguments`` is JSON text on ``.delta``, the parsed object on ``.done``.

    ``name`` and ``tool_call_id`` are set on the first fragment of a call and empty
    on the later ones; the ``.done`` item carries both.
    """

    type: Literal["tool_call.delta", "tool_call.done"] = "tool_call.delta"
    name: str = ""
    tool_call_id: str = ""
    arguments: str | JSONDict = ""
    fidelity: JSONDict | None = None
    provider: JSONDict | None = None

    def __init__(self, type: Literal["tool_call.delta", "tool_call.done"] = "tool_call.delta",
                 name: str = "", tool_call_id: str = "", arguments: str | JSONDict = "",
                 fidelity: JSONDict | None = None, provider: JSONDict | None = None) -> None:
        self.type = type
        self.name = name
        self.tool_call_id = tool_call_id
        self.arguments = arguments
        self.fidelity = fidelity
        self.provider = provider

    @property
    def parsed_arguments(self) -> JSONDict:
        """The arguments object of a ``tool_call.done`` item, typed (no cast needed).

        A ``.delta`` fragment holds JSON text, not an object: ``TypeError``.
        """
        if isinstance(self.arguments, dict):
            return self.arguments
        raise TypeError(f"{self.type} carries JSON text; the parsed arguments are on the "
                        "tool_call.done item")


@dataclass(slots=True)
class InlineDataItem(_InlineData):
    """Binary output (audio chunks, images) with its MIME type; bytes grow across fragments."""

    type: Literal["inline_data.delta", "inline_data.done"] = "inline_data.delta"
    data: bytes = b""
    mime_type: str = ""
    fidelity: JSONDict | None = None
    provider: JSONDict | None = None


@dataclass(slots=True)
class InlineThinkingItem(_InlineThinking):
    """Opaque reasoning (redacted or encrypted thinking), kept byte for byte to send back."""

    type: Literal["inline_thinking.delta", "inline_thinking.done"] = "inline_thinking.delta"
    data: bytes = b""
    fidelity: JSONDict | None = None
    provider: JSONDict | None = None


@dataclass(slots=True)
class EmbeddingItem(_Embedding):
    """One whole embedding vector (one delta and one done per input)."""

    type: Literal["embedding.delta", "embedding.done"] = "embedding.delta"
    embedding: list[float] = field(default_factory=list)
    fidelity: JSONDict | None = None
    provider: JSONDict | None = None


ContentItem = (
    TextItem | ThinkingItem | ToolCallItem | InlineDataItem | InlineThinkingItem | EmbeddingItem
)
ITEM_CLASSES: Final[dict[str, type[ContentItem]]] = {
    cls.kind: cls
    for cls in (TextItem, ThinkingItem, ToolCallItem, InlineDataItem, InlineThinkingItem,
                EmbeddingItem)
}

_FIELD_NAMES: Final[dict[str, tuple[str, ...]]] = {
    kind: tuple(f.name for f in fields(cls) if f.name != "type")
    for kind, cls in ITEM_CLASSES.items()
}
