"""The neutral request model: one chat request, whatever API it is written for.

Each dialect with a request side has a parser (``parse(body) -> ChatRequest``) and a
builder (``build(request) -> dict``) in its ``dialects/<name>/request.py``, reached
through ``streamflow.wire.dialects.get_request(name)``; a translating gateway is
``build_X(parse_Y(body))``, refusing what X cannot carry (``RequestSide.unsupported``).

The parts of a turn are the UniEvent ``.done`` items themselves (``TextItem``,
``ThinkingItem``, ``ToolCallItem``, ``InlineThinkingItem``, ``InlineDataItem``)
plus :class:`ToolResultPart`, so an assembled :class:`~streamflow.core.message.Message`
is an assistant turn as it is (``Turn.assistant(message)``), and each item's
``fidelity`` keeps the shape the dialect's decoder gives it:

* anthropic ``thinking`` -> ``ThinkingItem(fidelity={"signature": ...})``;
  ``redacted_thinking`` -> ``InlineThinkingItem(data)``;
* openai-chat ``reasoning_details`` -> ``ThinkingItem(fidelity={"reasoning_details":
  [...], "signature"?})`` and one ``InlineThinkingItem(data, fidelity=<entry without
  data>)`` per ``reasoning.encrypted`` entry; ``reasoning_content`` -> ``ThinkingItem``;
* openai-responses ``reasoning`` item -> one ``ThinkingItem`` per summary part and an
  ``InlineThinkingItem(data=<encrypted_content>, fidelity={"id": ...})``;
* gemini ``thoughtSignature`` -> ``fidelity={"thought_signature": ...}`` on the part's item.

A builder reads its own dialect's shape and, for a bare signature, the generic
``fidelity["signature"]``; what its API cannot take back (an unsigned thinking
block for Anthropic) is left out, as the API would refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .events import (
    EmbeddingItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    item_from_dict,
    item_to_dict,
)
from .message import Message

__all__ = ["ChatRequest", "Part", "Thinking", "ToolChoice", "ToolResultPart", "ToolSpec",
           "Turn", "EFFORT_BUDGETS", "budget_of", "effort_of"]


@dataclass(slots=True)
class ToolResultPart:
    """The result of tool call ``tool_call_id``: text, or text and image parts."""

    tool_call_id: str
    content: str | list[TextItem | InlineDataItem] = ""
    is_error: bool = False
    name: str = ""

    @property
    def text(self) -> str:
        """The result's text: its text parts one a line, a media part as its MIME type
        (``[image/png]``), for an API whose tool results are text only."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text if isinstance(p, TextItem) else f"[{p.mime_type or 'data'}]"
                         for p in self.content)


Part = TextItem | ThinkingItem | ToolCallItem | InlineThinkingItem | InlineDataItem | ToolResultPart
"""One part of a turn (images are ``InlineDataItem``, a URL image has ``provider={"url"}``)."""


@dataclass(slots=True)
class Turn:
    """One message of the conversation: ``user`` (text, images, tool results) or ``assistant``.

    ``provider`` keeps what the decoder kept whole with no neutral part for it, for a
    builder of the same dialect to put back: ``extra_blocks`` (Anthropic's server-tool
    blocks, each with its block ``index``).
    """

    role: Literal["user", "assistant"]
    parts: list[Part] = field(default_factory=list)
    provider: JSONDict = field(default_factory=dict)

    @classmethod
    def user(cls, text: str) -> Turn:
        """A user turn of one text part."""
        return cls("user", [TextItem("text.done", text)])

    @classmethod
    def assistant(cls, message: Message) -> Turn:
        """An assembled message as the assistant turn to send back (of a message with
        several choices, the first: ``message.choice(0)``), with the blocks its decoder
        kept whole (``provider["extra_blocks"]``)."""
        kept = message.provider.get("extra_blocks")
        return cls("assistant", [i for i in message.choice(0).items
                                 if not isinstance(i, EmbeddingItem)],
                   {"extra_blocks": list(kept)} if kept else {})

    @classmethod
    def results(cls, parts: list[ToolResultPart]) -> Turn:
        """The user turn carrying tool results (in call order)."""
        return cls("user", list(parts))

    def to_dict(self) -> JSONDict:
        """JSON form: ``{"role", "parts": [...], "provider"?}``; items as
        :func:`~streamflow.core.events.item_to_dict` writes them, a tool result as
        ``{"type": "tool_result", "tool_call_id", "content", "is_error", "name"}``."""
        out: JSONDict = {"role": self.role, "parts": [_part_to_dict(p) for p in self.parts]}
        if self.provider:
            out["provider"] = self.provider
        return out

    @classmethod
    def from_dict(cls, data: JSONDict) -> Turn:
        """Inverse of :meth:`to_dict` (``ValueError``/``KeyError`` for another shape)."""
        role = data["role"]
        if role not in ("user", "assistant"):
            raise ValueError(f"a turn's role is user or assistant, not {role!r}")
        return cls(role, [_part_from_dict(p) for p in data["parts"]],
                   dict(data.get("provider") or {}))


def _part_to_dict(part: Part) -> JSONDict:
    if not isinstance(part, ToolResultPart):
        return item_to_dict(part)
    content = part.content if isinstance(part.content, str) \
        else [item_to_dict(p) for p in part.content]
    return {"type": "tool_result", "tool_call_id": part.tool_call_id, "content": content,
            "is_error": part.is_error, "name": part.name}


def _part_from_dict(data: JSONDict) -> Part:
    if data.get("type") != "tool_result":
        item = item_from_dict(data)
        if not isinstance(item, (TextItem, ThinkingItem, ToolCallItem, InlineThinkingItem,
                                 InlineDataItem)):
            raise ValueError(f"{data.get('type')!r} is no part of a turn")
        return item
    content = data.get("content", "")
    if not isinstance(content, str):
        content = [item_from_dict(p) for p in content]
        if not all(isinstance(p, (TextItem, InlineDataItem)) for p in content):
            raise ValueError("a tool result's content is text and data parts")
    return ToolResultPart(str(data["tool_call_id"]), content, bool(data.get("is_error")),
                          str(data.get("name") or ""))


@dataclass(slots=True)
class ToolSpec:
    """A function tool: name, description and the JSON schema of its arguments.

    ``strict`` asks the API to hold the arguments to the schema exactly (OpenAI's strict
    mode); ``None``: the client did not say, which is not strict.
    """

    name: str
    description: str = ""
    parameters: JSONDict = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


@dataclass(slots=True)
class ToolChoice:
    """``auto``, ``none``, ``required`` (any tool) or ``tool`` (``name``); ``parallel`` calls."""

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = None
    parallel: bool | None = None


@dataclass(slots=True)
class Thinking:
    """Reasoning asked for: a token ``budget`` and/or an ``effort`` (low/medium/high)."""

    budget: int | None = None
    effort: str | None = None


EFFORT_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}


def budget_of(thinking: Thinking) -> int:
    """The token budget of ``thinking`` (from its effort when it has none)."""
    if thinking.budget is not None:
        return thinking.budget
    return EFFORT_BUDGETS.get(thinking.effort or "medium", EFFORT_BUDGETS["medium"])


def effort_of(thinking: Thinking) -> str:
    """The effort level of ``thinking`` (the nearest to its budget when it has none)."""
    if thinking.effort:
        return thinking.effort
    budget = thinking.budget or EFFORT_BUDGETS["medium"]
    for name in ("low", "medium"):
        if budget <= EFFORT_BUDGETS[name]:
            return name
    return "high"


@dataclass(slots=True)
class ChatRequest:
    """A chat request in no particular dialect (see the module doc).

    ``options`` holds the neutral options with no field of their own (names of
    ``dialects.request_base.NEUTRAL_OPTIONS``): ``response_format`` (``{"type":
    "text" | "json_object"}`` or ``{"type": "json_schema", "name", "schema",
    "strict"?, "description"?}``), ``seed``, ``top_k``, ``frequency_penalty``,
    ``presence_penalty``, ``user``, ``metadata``, ``n``. ``asked`` maps each option
    the client's body set (these, ``stop`` and ``parallel_tool_calls: false``) to its
    name in the client's dialect, so a refusal names it. ``extra`` holds the top-level
    fields of the source body the model has no place for, for a builder of the same
    format to put back; ``source`` names the dialect it was parsed from.
    """

    model: str = ""
    turns: list[Turn] = field(default_factory=list)
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] = field(default_factory=list)
    stream: bool = True
    include_usage: bool = False
    thinking: Thinking | None = None
    options: JSONDict = field(default_factory=dict)
    asked: dict[str, str] = field(default_factory=dict)
    extra: JSONDict = field(default_factory=dict)
    source: str = ""

    def ask(self, option: str, key: str, value: object) -> None:
        """Record option ``option`` set to ``value`` by the client's field ``key``."""
        if value is not None:
            self.options[option] = value
            self.asked[option] = key

    def to_dict(self) -> JSONDict:
        """JSON form (what another process needs to ask the same again: a continued
        answer's recipe): every field, the turns as :meth:`Turn.to_dict` writes them."""
        return {
            "model": self.model, "turns": [t.to_dict() for t in self.turns],
            "system": self.system,
            "tools": [{"name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": t.strict} for t in self.tools],
            "tool_choice": None if self.tool_choice is None else {
                "mode": self.tool_choice.mode, "name": self.tool_choice.name,
                "parallel": self.tool_choice.parallel},
            "max_tokens": self.max_tokens, "temperature": self.temperature,
            "top_p": self.top_p, "stop": list(self.stop), "stream": self.stream,
            "include_usage": self.include_usage,
            "thinking": None if self.thinking is None else {
                "budget": self.thinking.budget, "effort": self.thinking.effort},
            "options": dict(self.options), "asked": dict(self.asked),
            "extra": dict(self.extra), "source": self.source}

    @classmethod
    def from_dict(cls, data: JSONDict) -> ChatRequest:
        """Inverse of :meth:`to_dict` (``ValueError``/``KeyError``/``TypeError`` for another
        shape)."""
        choice, thinking = data.get("tool_choice"), data.get("thinking")
        return cls(
            model=str(data["model"]), turns=[Turn.from_dict(t) for t in data["turns"]],
            system=data.get("system"),
            tools=[ToolSpec(str(t["name"]), str(t.get("description") or ""),
                            dict(t.get("parameters") or {}), t.get("strict"))
                   for t in data.get("tools") or ()],
            tool_choice=None if choice is None else ToolChoice(
                choice["mode"], choice.get("name"), choice.get("parallel")),
            max_tokens=data.get("max_tokens"), temperature=data.get("temperature"),
            top_p=data.get("top_p"), stop=list(data.get("stop") or ()),
            stream=bool(data.get("stream", True)),
            include_usage=bool(data.get("include_usage")),
            thinking=None if thinking is None else Thinking(thinking.get("budget"),
                                                            thinking.get("effort")),
            options=dict(data.get("options") or {}), asked=dict(data.get("asked") or {}),
            extra=dict(data.get("extra") or {}), source=str(data.get("source") or ""))

    def tool_names(self) -> dict[str, str]:
        """Tool-call id -> tool name, from the assistant turns (Gemini's results need names)."""
        return {p.tool_call_id: p.name for t in self.turns for p in t.parts
                if isinstance(p, ToolCallItem)}
