"""UniEvent: the provider-neutral stream grammar every dialect normalises to.

The field names follow the UniEvent specification exactly::

    stream := delta_event* stop_event
    group  := K.delta+ K.done      K = text | thinking | tool_call | inline_data
                                       | inline_thinking | embedding

A ``delta`` event carries exactly one item in ``content_items``; the ``stop`` event
carries none, and always carries ``usage_metadata`` and ``finish_reason``.

Items are small slotted dataclasses (cheap to build on the per-token path; the
module is compiled by mypyc in the compiled build). Each has two optional dict slots:

* ``fidelity`` -- data that must be sent back unchanged on a later turn
  (thinking signatures, encrypted reasoning ids). At most one fragment of a group
  carries it and the ``.done`` item carries the same value.
* ``provider`` -- anything the provider sent that UniEvent has no field for
  (citations, logprobs, annotations, the raw block, a choice index...). Nothing a
  provider sends is dropped: it is mapped onto a field or kept here.

``UniEvent.provider`` is the same slot at event level: the first delta event
carries ``{"id", "model"}`` when known, and the stop event carries the
message-level extras (raw stop reason, stop sequence, raw usage, cost...).
Two keys of it are UniEvent's own, never message data:

* ``"usage_so_far"`` (:data:`USAGE_SO_FAR`), on the first delta event: the counts the
  provider reported before its first item (Anthropic's ``message_start``, Gemini's
  early ``usageMetadata``), in the JSON form of :func:`usage_to_dict`, so an encoder
  writes them in its opening events (the gateway's ``message_start`` carries the
  upstream's ``input_tokens``) and a partial message shows them. The stop event's
  usage replaces them; they are not merged into the message's ``provider``.
* ``"choice_finish_reasons"`` (:data:`CHOICE_FINISH_REASONS`), on the stop event of a
  response with several choices (OpenAI's ``n``, Gemini's ``candidateCount``): the
  UniEvent finish reason of each choice by its index, as a string (``{"0": "stop",
  "1": "length"}``; JSON keys are strings).

Several choices: the items of choice 0 stream first, then each other choice's groups
(groups never interleave, one stop for all), every one of their items tagged with its
index in ``provider`` (``"choice_index"`` from openai-chat, ``"candidate_index"`` from
Gemini, which tags each group's first fragment and its ``.done``); :func:`choice_index`
reads it. :attr:`Message.choices <streamflow.core.message.Message.choices>` keeps them apart.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from ._items import (
    _FIELD_NAMES,
    FINISH_REASONS,
    ITEM_CLASSES,
    KINDS,
    ContentItem,
    EmbeddingItem,
    EventType,
    FinishReason,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)

__all__ = [
    "ContentItem",
    "EmbeddingItem",
    "CHOICE_FINISH_REASONS",
    "CHOICE_KEYS",
    "EventType",
    "FINISH_REASONS",
    "FinishReason",
    "ITEM_CLASSES",
    "InlineDataItem",
    "InlineThinkingItem",
    "JSONDict",
    "KINDS",
    "TextItem",
    "ThinkingItem",
    "ToolCallItem",
    "USAGE_SO_FAR",
    "UniEvent",
    "Usage",
    "choice_index",
    "event_from_dict",
    "is_done",
    "item_from_dict",
    "item_to_dict",
    "join_fragments",
    "kind_and_value",
    "reported_usage",
    "total_usage",
    "usage_from_dict",
    "usage_so_far",
    "usage_to_dict",
]

USAGE_SO_FAR: Final = "usage_so_far"
"""The key of the first delta event's ``provider`` holding the counts reported so far."""
CHOICE_FINISH_REASONS: Final = "choice_finish_reasons"
"""The key of the stop event's ``provider`` holding each choice's finish reason (n > 1)."""
CHOICE_KEYS: Final[tuple[str, ...]] = ("choice_index", "candidate_index")
"""The item ``provider`` keys naming the choice an item belongs to (openai-chat, Gemini)."""

@dataclass(slots=True)
class Usage:
    """Token counts of a request, read from the stop event (never summed across events).

    ``cost`` is the provider-reported charge when it reports one (OpenRouter);
    ``provider`` keeps the raw usage object so no counter is lost.
    ``cache_write_tokens`` counts the prompt tokens written to the provider's cache
    (Anthropic's ``cache_creation_input_tokens``, Bedrock's ``cacheWriteInputTokens``,
    OpenRouter's ``prompt_tokens_details.cache_write_tokens``; billed apart from reads);
    like ``cached_tokens`` (the reads) they are part of ``prompt_tokens``.
    ``final`` is False on a partial message's usage: the counts the provider reported
    before the stream was cut (Anthropic's ``message_start``...), not its closing ones.
    """

    cached_tokens: int | None = None
    prompt_tokens: int | None = None
    thoughts_tokens: int | None = None
    response_tokens: int | None = None
    cost: float | None = None
    provider: JSONDict | None = None
    cache_write_tokens: int | None = None
    final: bool = True

    def __init__(self, cached_tokens: int | None = None, prompt_tokens: int | None = None,
                 thoughts_tokens: int | None = None, response_tokens: int | None = None,
                 cost: float | None = None, provider: JSONDict | None = None,
                 cache_write_tokens: int | None = None, final: bool = True) -> None:
        self.cached_tokens = cached_tokens
        self.prompt_tokens = prompt_tokens
        self.thoughts_tokens = thoughts_tokens
        self.response_tokens = response_tokens
        self.cost = cost
        self.provider = provider
        self.cache_write_tokens = cache_write_tokens
        self.final = final

    @property
    def reported(self) -> bool:
        """True when the provider reported anything: a count, a cost or its raw usage.

        A stream without usage (an OpenAI chat stream without
        ``stream_options.include_usage``) ends with a stop event whose usage reports
        nothing (the grammar's stop always carries one); its message's usage is ``None``.
        """
        return not (self.cached_tokens is None and self.prompt_tokens is None
                    and self.thoughts_tokens is None and self.response_tokens is None
                    and self.cost is None and self.provider is None
                    and self.cache_write_tokens is None)

    def so_far(self) -> Usage:
        """A copy marked not final: the counts reported before the end of the stream."""
        return Usage(self.cached_tokens, self.prompt_tokens, self.thoughts_tokens,
                     self.response_tokens, self.cost, self.provider, self.cache_write_tokens,
                     False)


@dataclass(slots=True)
class UniEvent:
    """One event of a normalised stream: ``delta`` with one item, or the final ``stop``."""

    event_type: EventType
    content_items: list[ContentItem]
    usage_metadata: Usage | None = None
    finish_reason: FinishReason | None = None
    created_at: int = 0
    provider: JSONDict | None = None
    role: Literal["assistant"] = "assistant"

    def __init__(self, event_type: EventType, content_items: list[ContentItem],
                 usage_metadata: Usage | None = None, finish_reason: FinishReason | None = None,
                 created_at: int = 0, provider: JSONDict | None = None,
                 role: Literal["assistant"] = "assistant") -> None:
        self.event_type = event_type
        self.content_items = content_items
        self.usage_metadata = usage_metadata
        self.finish_reason = finish_reason
        self.created_at = created_at
        self.provider = provider
        self.role = role

    @property
    def item(self) -> ContentItem | None:
        """The single item of a delta event (None on stop)."""
        return self.content_items[0] if self.content_items else None

    def to_dict(self) -> JSONDict:
        """The JSON form, with seed-001 field names."""
        return {
            "role": self.role,
            "event_type": self.event_type,
            "content_items": [item_to_dict(i) for i in self.content_items],
            "usage_metadata": usage_to_dict(self.usage_metadata),
            "finish_reason": self.finish_reason,
            "created_at": self.created_at,
            "provider": self.provider,
        }


def kind_and_value(item: ContentItem) -> tuple[str, Any]:
    """``(item.kind, the value of its growing field)``: the per-token path's dispatch
    (compiled, the three common item types are read natively, not by name)."""
    if isinstance(item, TextItem):
        return "text", item.text
    if isinstance(item, ThinkingItem):
        return "thinking", item.thinking
    if isinstance(item, ToolCallItem):
        return "tool_call", item.arguments
    return item.kind, getattr(item, item.growing)


def is_done(item: ContentItem) -> bool:
    """True for a ``K.done`` item."""
    return item.type.endswith(".done")


def reported_usage(usage: Usage | None) -> Usage | None:
    """``usage`` when the provider reported anything (:attr:`Usage.reported`), else None:
    what :attr:`Message.usage <streamflow.core.message.Message.usage>` and the sinks read from
    a stop event, whose usage the grammar always sets."""
    return usage if usage is not None and usage.reported else None


def total_usage(usages: Iterable[Usage | None]) -> Usage:
    """The sum of ``usages`` field by field; a field none of them reported stays ``None``."""
    names = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens", "cost",
             "cache_write_tokens")
    sums: dict[str, Any] = dict.fromkeys(names)
    for usage in usages:
        if usage is None:
            continue
        for name in names:
            value = getattr(usage, name)
            if value is not None:
                sums[name] = (sums[name] or 0) + value
    return Usage(**sums)


def choice_index(item: ContentItem) -> int:
    """The index of the choice ``item`` belongs to (its ``provider``'s ``choice_index`` or
    ``candidate_index``, see :data:`CHOICE_KEYS`); 0 when it names none."""
    provider = item.provider
    if provider is None:
        return 0
    for key in CHOICE_KEYS:
        value = provider.get(key)
        if type(value) is int:
            return value
    return 0


_COUNTERS: Final[tuple[str, ...]] = ("cached_tokens", "prompt_tokens", "thoughts_tokens",
                                     "response_tokens", "cache_write_tokens")


def usage_so_far(provider: JSONDict | None) -> Usage | None:
    """The counts an event's ``provider`` says were reported so far (:data:`USAGE_SO_FAR`),
    marked not final; ``None`` when it has none or when the value is no usage object
    (counts that are not non-negative integers: the ``uni`` decoder refuses those)."""
    if not provider:
        return None
    data = provider.get(USAGE_SO_FAR)
    if type(data) is not dict:
        return None
    for key in _COUNTERS:
        value = data.get(key)
        if value is not None and (type(value) is not int or value < 0):
            return None
    cost = data.get("cost")
    raw = data.get("provider")
    if (cost is not None and type(cost) not in (int, float)) or (
            raw is not None and type(raw) is not dict):
        return None
    return Usage(data.get("cached_tokens"), data.get("prompt_tokens"),
                 data.get("thoughts_tokens"), data.get("response_tokens"),
                 None if cost is None else float(cost), raw, data.get("cache_write_tokens"),
                 False)


def join_fragments(first: ContentItem, parts: list[Any], done: bool) -> ContentItem:
    """Merge a group: ``first`` with its growing field replaced by all ``parts`` joined.

    ``parts`` are the growing-field values of every fragment (str, bytes or a vector).
    Tool-call arguments stay JSON text here; the caller parses them for ``.done``.
    """
    growing = first.growing
    if growing == "embedding":
        value: Any = parts[-1] if parts else []
    elif growing == "data":
        value = b"".join(parts)
    else:
        value = "".join(parts)
    suffix = ".done" if done else ".delta"
    return replace(first, type=first.kind + suffix, **{growing: value})  # type: ignore[arg-type]


def item_to_dict(item: ContentItem) -> JSONDict:
    """An item's JSON form; bytes are base64 text."""
    out: JSONDict = {"type": item.type}
    for name in _FIELD_NAMES[item.kind]:
        value = getattr(item, name)
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        out[name] = value
    return out


def item_from_dict(data: JSONDict) -> ContentItem:
    """Rebuild an item from :func:`item_to_dict` output (raises ``ValueError``/``KeyError``)."""
    kind, _, phase = str(data["type"]).partition(".")
    cls = ITEM_CLASSES[kind]
    if phase not in ("delta", "done"):
        raise ValueError(f"unknown item type {data['type']!r}")
    known = _FIELD_NAMES[kind]
    values = {k: v for k, v in data.items() if k in known}
    if cls.growing == "data" and isinstance(values.get("data"), str):
        values["data"] = base64.b64decode(values["data"])
    return cls(type=data["type"], **values)


def usage_to_dict(usage: Usage | None) -> JSONDict | None:
    """Usage as JSON: the four seed counters, plus ``cache_write_tokens``/``cost``/
    ``provider`` when set and ``final: false`` on a partial message's usage."""
    if usage is None:
        return None
    out: JSONDict = {
        "cached_tokens": usage.cached_tokens,
        "prompt_tokens": usage.prompt_tokens,
        "thoughts_tokens": usage.thoughts_tokens,
        "response_tokens": usage.response_tokens,
    }
    if usage.cache_write_tokens is not None:
        out["cache_write_tokens"] = usage.cache_write_tokens
    if usage.cost is not None:
        out["cost"] = usage.cost
    if not usage.final:
        out["final"] = False
    if usage.provider is not None:
        out["provider"] = usage.provider
    return out


def usage_from_dict(data: JSONDict | None) -> Usage | None:
    """Inverse of :func:`usage_to_dict`."""
    if data is None:
        return None
    return Usage(**{k: v for k, v in data.items() if k in Usage.__dataclass_fields__})


def event_from_dict(data: JSONDict) -> UniEvent:
    """Rebuild a UniEvent from its JSON form (raises ``ValueError``/``KeyError``/``TypeError``)."""
    event_type = data["event_type"]
    if event_type not in ("delta", "stop"):
        raise ValueError(f"unknown event_type {event_type!r}")
    finish = data.get("finish_reason")
    if finish is not None and finish not in FINISH_REASONS:
        raise ValueError(f"unknown finish_reason {finish!r}")
    return UniEvent(
        event_type=event_type,
        content_items=[item_from_dict(i) for i in data.get("content_items") or []],
        usage_metadata=usage_from_dict(data.get("usage_metadata")),
        finish_reason=finish,
        created_at=int(data.get("created_at") or 0),
        provider=data.get("provider"),
    )
