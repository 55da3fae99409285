"""Tool results and the sans-IO half of dispatch: look a call up and validate its arguments.

Every tool call gets exactly one :class:`ToolResult`, keyed by its ``tool_call_id``.
A failure is a result too (``is_error=True``) whose ``content`` tells the model what
went wrong in a form it can act on::

    {"error": "ValidationError", "message": "...", "errors": [<pydantic error dicts>]}
    {"error": "UnknownTool", "message": "...", "available": ["get_weather"]}
    {"error": "ValueError", "message": "city not found"}          # the tool raised
    {"error": "Timeout", "message": "tool 'slow' timed out after 2s"}

A tool whose result has media (an MCP tool returning an image) returns a
:class:`ToolContent`: its parts go to the provider as they are where the API takes
images in tool results, and :attr:`ToolResult.text` is their text.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json, to_json

from ..events import InlineDataItem, TextItem, ToolCallItem
from ..requests import ToolResultPart
from ._registry import ToolRegistry
from ._schema import Tool


@dataclass(frozen=True, slots=True)
class ToolContent:
    """A result made of content parts: text and media (``InlineDataItem`` images, audio).

    ``structured`` is the result as a JSON value too, when the tool gave one (an MCP
    tool's ``structuredContent``).
    """

    parts: tuple[TextItem | InlineDataItem, ...]
    structured: Any = field(default=None)

    @property
    def text(self) -> str:
        """The text parts, one a line; a media part reads ``[image/png]`` (its MIME type)."""
        return "\n".join(p.text if isinstance(p, TextItem) else f"[{p.mime_type or 'data'}]"
                         for p in self.parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"parts": [{"type": "text", "text"} | {"type": "data", "mimeType",
        "data": base64}], "structured"?}``."""
        parts = [{"type": "text", "text": p.text} if isinstance(p, TextItem) else
                 {"type": "data", "mimeType": p.mime_type,
                  "data": base64.b64encode(p.data).decode("ascii")} for p in self.parts]
        out: dict[str, Any] = {"parts": parts}
        if self.structured is not None:
            out["structured"] = _json_safe(self.structured)
        return out


def to_text(value: Any) -> str:
    """A tool's return value as the text sent to the model (strings as they are, else JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, ToolContent):
        return value.text
    return to_json(value, fallback=str).decode()


def _json_safe(value: Any) -> Any:
    """``value`` with anything non-JSON (exceptions in pydantic ``ctx``...) turned to text."""
    return from_json(to_json(value, fallback=str))


DENIED = "ApprovalDenied"
"""The ``error`` of a call a person denied (``{"error": "ApprovalDenied", "message": reason}``)."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call: ``content`` is the return value or an error object."""

    tool_call_id: str
    name: str
    content: Any
    is_error: bool = False
    arguments: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """``content`` as the text a provider's tool-result message carries."""
        return to_text(self.content)

    @property
    def parts(self) -> tuple[TextItem | InlineDataItem, ...] | None:
        """The content parts of a :class:`ToolContent` result (``None`` for other results)."""
        return self.content.parts if isinstance(self.content, ToolContent) else None

    @property
    def denied(self) -> bool:
        """Whether this is the result of a call a person denied (never ran)."""
        return (self.is_error and isinstance(self.content, dict)
                and self.content.get("error") == DENIED)

    def to_part(self) -> ToolResultPart:
        """The result as the part of the next request's user turn: its text, or its
        content parts when it has media."""
        parts = self.parts
        return ToolResultPart(self.tool_call_id, self.text if parts is None else list(parts),
                              self.is_error, self.name)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"tool_call_id", "name", "content", "is_error"}``."""
        content = (self.content.to_dict() if isinstance(self.content, ToolContent)
                   else _json_safe(self.content))
        return {"tool_call_id": self.tool_call_id, "name": self.name,
                "content": content, "is_error": self.is_error}


def error_result(call: ToolCallItem, error: str, message: str, **extra: Any) -> ToolResult:
    """An ``is_error`` result for ``call`` with ``{"error", "message", **extra}`` content."""
    content = {"error": error, "message": message, **{k: _json_safe(v) for k, v in extra.items()}}
    args = call.arguments if isinstance(call.arguments, dict) else None
    return ToolResult(call.tool_call_id, call.name, content, True, args)


def denial(call: ToolCallItem, reason: str | None = None) -> ToolResult:
    """The result of ``call`` a person denied (never ran): ``{"error": "ApprovalDenied",
    "message": reason}``, the reason ``"the user denied this call"`` when none was given."""
    return error_result(call, DENIED, reason or "the user denied this call")


def prepare_call(registry: ToolRegistry,
                 call: ToolCallItem) -> tuple[Tool, dict[str, Any]] | ToolResult:
    """The tool and its validated keyword arguments, or the error result to send back.

    An unknown name gives an ``UnknownTool`` result listing the registered names;
    invalid arguments give a ``ValidationError`` result carrying pydantic's structured
    error list (``loc``, ``msg``, ``type``, ``input``) so the model can fix its call.
    A check that itself fails (a validator raising something else) is a
    ``ValidationError`` result too: checking a call never raises.
    """
    tool = registry.get(call.name)
    if tool is None:
        return error_result(call, "UnknownTool", f"no tool named {call.name!r}",
                            available=registry.names)
    if not isinstance(call.arguments, dict):
        return error_result(call, "ValidationError",
                            f"arguments of {call.name!r} are not a JSON object", errors=[])
    try:
        return tool, tool.validate(call.arguments)
    except ValidationError as exc:
        return error_result(
            call, "ValidationError",
            f"invalid arguments for {call.name!r}: {exc.error_count()} error(s)",
            errors=exc.errors(include_url=False))
    except Exception as exc:  # the check itself failed: still this call's result
        return error_result(
            call, "ValidationError",
            f"the arguments of {call.name!r} could not be checked: {type(exc).__name__}: {exc}",
            errors=[])
