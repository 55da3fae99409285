"""Tool-call argument text that grows by fragments, parsed lazily.

Fragments are appended to a list (no re-join per fragment); :meth:`ArgumentBuffer.snapshot`
gives the best-effort object so far with ``pydantic_core.from_json(allow_partial=...)``
and caches it until the next fragment, so a UI polling at its frame rate costs one
parse per frame, not one per fragment; :meth:`ArgumentBuffer.parse` is the strict
parse at the end of the call.
"""

from __future__ import annotations

import re
from typing import Any, Final

from pydantic_core import from_json

from .errors import LimitExceededError, ToolCallArgumentParseError

__all__ = ["ArgumentBuffer", "ObjectEnd", "parse_arguments"]


def parse_arguments(text: str, *, tool_call_id: str = "", name: str = "",
                    cause: str = "") -> dict[str, Any]:
    """Strictly parse complete tool arguments into a JSON object (empty text is ``{}``).

    Raises :class:`~streamflow.core.errors.ToolCallArgumentParseError` when the text is
    malformed (``NaN``/``Infinity`` are not JSON), cut short, or parses to something
    other than an object; ``cause`` (why the text may be cut) is added to its message.
    """
    if not text.strip():
        return {}
    why = f" ({cause})" if cause else ""
    try:
        value = from_json(text, allow_inf_nan=False)
    except ValueError as exc:
        raise ToolCallArgumentParseError(
            f"tool call {name or tool_call_id!r}: arguments are not valid JSON ({exc}){why}",
            tool_call_id=tool_call_id, name=name, arguments=text,
        ) from None
    if not isinstance(value, dict):
        raise ToolCallArgumentParseError(
            f"tool call {name or tool_call_id!r}: arguments are a JSON {type(value).__name__}, "
            f"not an object{why}",
            tool_call_id=tool_call_id, name=name, arguments=text,
        )
    return value


class ArgumentBuffer:
    """Accumulates argument fragments; joins and parses only when asked."""

    __slots__ = ("_parts", "_size", "_limit", "_snap", "_snap_len")

    def __init__(self, limit: int | None = None) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._limit = limit
        self._snap: Any = None
        self._snap_len = -1

    def append(self, fragment: str) -> None:
        """Add a fragment (O(1)); raises ``LimitExceededError`` past the limit."""
        if not fragment:
            return
        size = self._size + len(fragment)
        if self._limit is not None and size > self._limit:
            raise LimitExceededError("max_tool_arguments_bytes", self._limit)
        self._size = size
        self._parts.append(fragment)

    def __len__(self) -> int:
        return self._size

    @property
    def text(self) -> str:
        """The whole text so far (joined once, then kept joined)."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def snapshot(self) -> Any:
        """Best-effort parse of the text so far (``None`` before anything parses)."""
        if self._snap_len != self._size:
            text = self.text
            try:
                self._snap = from_json(text, allow_partial="trailing-strings") if text else None
            except ValueError:
                pass  # keep the last good snapshot
            self._snap_len = self._size
        return self._snap

    def parse(self, *, tool_call_id: str = "", name: str = "") -> dict[str, Any]:
        """Strict parse of the whole text into an object (see :func:`parse_arguments`)."""
        return parse_arguments(self.text, tool_call_id=tool_call_id, name=name)


_TOKEN: Final = re.compile(r'[{}\[\]"\\]')
_IN_STRING: Final = re.compile(r'["\\]')


class ObjectEnd:
    """Tells whether JSON text fed so far is one closed object (each byte scanned once).

    Only structure is tracked (strings, escapes, nesting); the strict parse comes
    when the call closes.
    """

    __slots__ = ("_depth", "_escape", "_in_string", "_state")

    def __init__(self) -> None:
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._state = 0  # 0: nothing yet, 1: inside the object, 2: closed, 3: not one object

    @property
    def closed(self) -> bool:
        """True when the text is one object, closed, with only whitespace after it."""
        return self._state == 2

    def feed(self, text: str) -> None:
        """Scan the next fragment."""
        state = self._state
        if state == 3 or not text:
            return
        if state != 1:
            stripped = text.lstrip()
            if not stripped:
                return
            if state == 2 or stripped[0] != "{":
                self._state = 3
                return
        depth, in_string, i, n = self._depth, self._in_string, 0, len(text)
        if self._escape:
            self._escape, i = False, 1
        while i < n:
            m = (_IN_STRING if in_string else _TOKEN).search(text, i)
            if m is None:
                break
            c, i = m.group(), m.end()
            if in_string:
                if c == "\\":
                    if i >= n:
                        self._escape = True
                    i += 1
                else:
                    in_string = False
            elif c == '"':
                in_string = True
            elif c in "{[":
                depth += 1
            else:
                depth -= 1
                if depth <= 0:
                    self._state = 2 if depth == 0 and not text[i:].strip() else 3
                    self._depth, self._in_string = depth, False
                    return
        self._state, self._depth, self._in_string = 1, depth, in_string
