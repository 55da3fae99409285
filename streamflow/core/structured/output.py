"""Structured output, sans-IO: typed partial snapshots while the JSON arrives, a strict final.

An :class:`OutputParser` is fed the stream's UniEvents (``feed(event)``) and collects the
JSON text of the answer: the text deltas (``output_from="text"``; a Markdown ```json
fence around it is tolerated), or the argument fragments of the tool call that carries
the output (``"tool"``); ``"auto"`` keeps both and reads the tool call when the answer is
one tool call and no text. Collecting is an append per fragment; nothing is parsed until
:attr:`OutputParser.snapshot` is read, and then at most once per event:

* ``snapshot`` is an instance of the derived partial type (:func:`partial_type`), parsed
  with ``pydantic_core.from_json(allow_partial="trailing-strings")``. It never raises, a
  field once present never disappears and a value only grows (a cut string lengthens, a
  list gains items): a trailing number that may still be cut is left out, and a parse that
  would lose what an earlier one showed keeps the earlier snapshot;
* :meth:`OutputParser.final` validates the complete JSON strictly against the real type
  and returns the value, or raises :class:`~streamflow.core.errors.OutputValidationError`.

``output`` is a pydantic model, any type a ``TypeAdapter`` takes (``TypedDict``,
``list[...]``, a dataclass) or a JSON schema ``dict`` (snapshots are then plain JSON values
and the final is checked with the ``jsonschema`` package, through
:func:`streamflow.core._json_schema.checked_schema`: a schema referring outside itself or past
the size and depth limits is a :class:`~streamflow.core.errors.SchemaRefusedError` when the
parser is made, and nothing is ever fetched).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final, Literal

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import from_json, to_jsonable_python

from .._json_schema import CheckedSchema, checked_schema
from ..errors import LimitExceededError, OutputValidationError
from ..events import TextItem, ToolCallItem, UniEvent
from ..message import Message
from .snapshots import Snapshots

__all__ = ["OutputFrom", "OutputParser", "json_text"]

OutputFrom = Literal["auto", "text", "tool"]
_FENCE: Final = "```"


def json_text(text: str) -> str:
    """The JSON inside ``text``: itself, or the body of a Markdown code fence around it.

    An opening fence (```` ```json ```` or ```` ``` ````, possibly after a line of prose)
    is dropped with its line, and everything from the closing fence on.
    """
    start = text.find(_FENCE)
    if start < 0 or text[:start].lstrip().startswith(("{", "[")):
        return text
    newline = text.find("\n", start)
    if newline < 0:
        return ""  # the fence's own line has not ended yet
    body = text[newline + 1:]
    end = body.find(_FENCE)
    return body if end < 0 else body[:end]


class _Fragments:
    """Text that grows by fragments: appended in O(1), joined only when read."""

    __slots__ = ("_parts", "size")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.size = 0

    def append(self, fragment: str) -> None:
        if fragment:
            self._parts.append(fragment)
            self.size += len(fragment)

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""


class OutputParser:
    """Collects an answer's JSON output from UniEvents; see the module doc.

    Args:
        output: the output type (pydantic model, ``TypeAdapter``-able type, JSON schema dict).
        output_from: ``"auto"``, ``"text"`` or ``"tool"``.
        tool_name: the tool whose call carries the output (``None``: the first call).
        max_bytes: a bound on the collected text (``LimitExceededError`` past it).

    Raises :class:`~streamflow.core.errors.SchemaRefusedError` for a JSON schema ``output``
    that refers outside itself or passes the size and depth limits.
    """

    def __init__(self, output: Any, *, output_from: OutputFrom = "auto",
                 tool_name: str | None = None, max_bytes: int | None = None) -> None:
        if output_from not in ("auto", "text", "tool"):
            raise ValueError(f"output_from must be 'auto', 'text' or 'tool', not {output_from!r}")
        self.output = output
        self.output_from: OutputFrom = output_from
        self.tool_name = tool_name
        self._max = max_bytes
        self._schema: CheckedSchema | None = (
            checked_schema(output, name="output", check=False) if isinstance(output, dict)
            else None)
        self._final = None if self._schema is not None else TypeAdapter(output)
        self._snapshots = Snapshots(None if self._schema is not None else output)
        self._text = _Fragments()
        self._tool = _Fragments()
        self._tool_state = 0  # 0: no call yet, 1: in the output's call, 2: that call is over
        self._in_other_call = False
        self._seen = -1       # the collected size the snapshot was taken at

    # -- collecting ------------------------------------------------------------
    def feed(self, event: UniEvent) -> None:
        """Take the output's fragments from one UniEvent (others are ignored)."""
        for item in event.content_items:
            if isinstance(item, TextItem):
                if item.type == "text.delta" and self.output_from != "tool":
                    self._grow(self._text, item.text)
            elif isinstance(item, ToolCallItem) and self.output_from != "text":
                self._tool_item(item)

    def _tool_item(self, item: ToolCallItem) -> None:
        if item.type == "tool_call.done":
            if self._tool_state == 1 and not self._in_other_call:
                self._tool_state = 2
            self._in_other_call = False
            return
        if item.name or item.tool_call_id:  # the first fragment of a call
            wanted = self.tool_name is None or item.name == self.tool_name
            self._in_other_call = not (wanted and self._tool_state == 0)
            if not self._in_other_call:
                self._tool_state = 1
        if self._tool_state == 1 and not self._in_other_call and isinstance(item.arguments, str):
            self._grow(self._tool, item.arguments)

    def _grow(self, buffer: _Fragments, fragment: str) -> None:
        if self._max is not None and self._text.size + self._tool.size + len(fragment) > self._max:
            raise LimitExceededError("max_output_bytes", self._max)
        buffer.append(fragment)

    def _source(self) -> str:
        """The JSON text collected so far, from the answer's text or the output's call."""
        if self.output_from == "tool" or (self.output_from == "auto" and self._tool_state
                                          and not self._text.text.strip()):
            return self._tool.text
        return json_text(self._text.text)

    # -- reading -----------------------------------------------------------------
    @property
    def collected(self) -> int:
        """Characters of output text collected so far."""
        return self._text.size + self._tool.size

    @property
    def snapshot(self) -> Any:
        """The partial output so far (``None`` until something parses); never raises."""
        size = self._text.size + self._tool.size
        if size != self._seen:
            self._seen = size
            self._snapshots.update(self._source())
        return self._snapshots.value

    def final(self, message: Message | None = None) -> Any:
        """The output, validated strictly; ``OutputValidationError`` when it does not fit.

        ``message`` is the assembled answer (its text, or its tool call); without it the
        text collected from the events is validated.
        """
        raw = self._final_text(message) if message is not None else self._source().strip()
        if self._schema is not None:
            return self._check_schema(raw, message)
        assert self._final is not None
        try:
            return self._final.validate_json(raw)
        except ValidationError as exc:
            raise OutputValidationError(
                f"the structured output does not match {_name(self.output)}: "
                f"{exc.error_count()} error(s), first: {exc.errors()[0]['msg']}",
                raw=raw, errors=_plain_errors(exc), partial=message,
                partial_output=self.snapshot) from None

    def _final_text(self, message: Message) -> str:
        calls = message.tool_calls
        if self.tool_name is not None:
            calls = [call for call in calls if call.name == self.tool_name]
        use_tool = self.output_from == "tool" or (
            self.output_from == "auto" and len(message.tool_calls) == 1
            and not message.text.strip())
        if not use_tool:
            return json_text(message.text).strip()
        if not calls:
            return ""
        arguments = calls[0].arguments
        if isinstance(arguments, str):
            return arguments
        return TypeAdapter(Any).dump_json(arguments).decode()

    def _check_schema(self, raw: str, message: Message | None) -> Any:
        assert self._schema is not None
        try:
            value = from_json(raw, allow_inf_nan=False)
        except ValueError as exc:
            raise OutputValidationError(
                f"the structured output is not valid JSON: {exc}", raw=raw,
                errors=[{"type": "json_invalid", "loc": (), "msg": str(exc)}],
                partial=message, partial_output=self.snapshot) from None
        problems = self._schema.problems(value)
        if problems:
            errors = [{"type": p.keyword, "loc": p.path, "msg": p.message} for p in problems]
            raise OutputValidationError(
                f"the structured output does not match its JSON schema: {len(errors)} "
                f"error(s), first: {errors[0]['msg']}", raw=raw, errors=errors,
                partial=message, partial_output=self.snapshot)
        return value


def _plain_errors(exc: ValidationError) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = to_jsonable_python(
        exc.errors(include_url=False), fallback=str)
    return errors


def _name(output: Any) -> str:
    if isinstance(output, type) and (issubclass(output, BaseModel)
                                     or dataclasses.is_dataclass(output)):
        return output.__name__
    return repr(output)
