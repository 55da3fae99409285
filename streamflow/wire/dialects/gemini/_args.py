"""Streamed Gemini function-call arguments (``partialArgs``) as growing JSON text.

Newer Gemini models (``streamFunctionCallArguments``) send a call's arguments as
``partialArgs``: a list of ``{"jsonPath": "$.a.b[0]", "stringValue"|"numberValue"|
"boolValue"|"nullValue": ..., "willContinue": bool}``, where the chunks of one string
arrive as successive ``stringValue``s of the same path. UniEvent streams tool
arguments as JSON text fragments, so :class:`ArgsWriter` writes each partial
argument as the next piece of the JSON document: keys, separators, brackets and
escaped string chunks. The fragments concatenate to the JSON of the whole
arguments object, and a partial parse of the prefix shows the arguments so far.

This works because a model writes its arguments in document order. A path that
goes back into a container already closed, repeats a finished key, or skips an
array index cannot be written as a stream; it is a ``ProtocolError``. A string
stays open until another path (or the end) comes, so servers that omit
``willContinue`` on string chunks still concatenate correctly.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ....core.errors import ProtocolError
from .._readers import expect_str

_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]"                 # .name  [2]
                      r"""|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")  # ['a b'] ["a b"]
_UNESCAPE = re.compile(r"\\(.)")

Path = tuple[str | int, ...]


def parse_json_path(path: str) -> Path:
    """``"$.a['b c'][2]"`` -> ``("a", "b c", 2)``; anything else is a ``ProtocolError``."""
    if not path.startswith("$"):
        raise ProtocolError(f"partialArgs jsonPath must start with '$', got {path!r}")
    out: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _SEGMENT.match(path, pos)
        if match is None:
            raise ProtocolError(f"unsupported partialArgs jsonPath {path!r}")
        name, index, single, double = match.groups()
        if index is not None:
            out.append(int(index))
        elif name is not None:
            out.append(name)
        else:
            out.append(_UNESCAPE.sub(r"\1", single if single is not None else double))
        pos = match.end()
    if not out:
        raise ProtocolError("partialArgs jsonPath '$' names no argument")
    return tuple(out)


def _esc(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class _Frame:
    __slots__ = ("array", "count", "key", "keys")

    def __init__(self, key: str | int | None, array: bool) -> None:
        self.key = key
        self.array = array
        self.count = 0
        self.keys: set[str] = set()


class ArgsWriter:
    """Writes one call's ``partialArgs`` as JSON text; :meth:`start` ... :meth:`close`."""

    __slots__ = ("_stack", "_string")

    def __init__(self) -> None:
        self._stack = [_Frame(None, False)]
        self._string: Path | None = None

    @staticmethod
    def start() -> str:
        """The first fragment: the arguments object opens."""
        return "{"

    def feed(self, partial: Any) -> str:
        """The JSON text of one partial argument (``""`` when it carries no value)."""
        if type(partial) is not dict:
            raise ProtocolError("a partialArgs entry must be a JSON object")
        path = parse_json_path(expect_str(partial.get("jsonPath"), "partialArgs jsonPath"))
        if "stringValue" in partial:
            chunk = _esc(expect_str(partial["stringValue"], "partialArgs stringValue"))
            if self._string == path:
                return chunk
            head = self._goto(path)
            self._string = path
            return head + '"' + chunk
        if "numberValue" in partial:
            value = partial["numberValue"]
            if type(value) not in (int, float):
                raise ProtocolError(f"partialArgs numberValue must be a number, got {value!r}")
        elif "boolValue" in partial:
            value = partial["boolValue"]
            if type(value) is not bool:
                raise ProtocolError(f"partialArgs boolValue must be a boolean, got {value!r}")
        elif "nullValue" in partial:
            value = None
        else:
            return ""
        return self._goto(path) + json.dumps(value)

    def close(self) -> str:
        """The closing text: the open string, then every open container."""
        out = '"' if self._string is not None else ""
        self._string = None
        while self._stack:
            out += "]" if self._stack.pop().array else "}"
        return out

    def _goto(self, path: Path) -> str:
        out = []
        if self._string is not None:
            out.append('"')
            self._string = None
        parent, last = path[:-1], path[-1]
        stack = self._stack
        depth = 0
        while (depth < len(parent) and depth + 1 < len(stack)
               and stack[depth + 1].key == parent[depth]):
            depth += 1
        while len(stack) > depth + 1:
            out.append("]" if stack.pop().array else "}")
        for j in range(depth, len(parent)):
            inner = parent[j + 1] if j + 1 < len(parent) else last
            out.append(self._member(parent[j]))
            array = type(inner) is int
            out.append("[" if array else "{")
            stack.append(_Frame(parent[j], array))
        out.append(self._member(last))
        return "".join(out)

    def _member(self, key: str | int) -> str:
        frame = self._stack[-1]
        sep = "," if frame.count else ""
        if frame.array:
            if type(key) is not int or key != frame.count:
                raise ProtocolError(f"partialArgs out of document order at element {key!r}")
        else:
            if type(key) is not str or key in frame.keys:
                raise ProtocolError(f"partialArgs out of document order at key {key!r}")
            frame.keys.add(key)
            sep += json.dumps(key, ensure_ascii=False) + ":"
        frame.count += 1
        return sep
