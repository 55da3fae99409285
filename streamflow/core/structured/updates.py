"""The partial output as UI updates: when to send a snapshot, and the JSON Patch between two.

A UI that shows the object as it arrives gets the whole snapshot again (the AI SDK's
``data-*`` part, replaced in place by its id) or a JSON Patch from the previous one
(AG-UI's ``STATE_DELTA``). :class:`OutputUpdates` decides when: after every change while
the object is small, then whenever it has grown by an eighth since the last update, so
the bytes sent stay linear in the object's size however many fragments it arrives in;
the final, validated object is always sent. :func:`json_patch` is RFC 6902's ``add`` /
``remove`` / ``replace`` between two JSON values.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic_core import to_json, to_jsonable_python

from ..events import UniEvent
from .output import OutputParser

__all__ = ["OutputUpdates", "json_patch", "plain"]

_SMALL: Final = 512  # below this many bytes, every change is sent


def plain(value: Any) -> Any:
    """A snapshot as plain JSON values (a partial model's unset fields left out)."""
    return to_jsonable_python(value, exclude_none=True, fallback=str)


class OutputUpdates:
    """Feeds an :class:`OutputParser` and says when the UI should get the snapshot."""

    def __init__(self, parser: OutputParser) -> None:
        self.parser = parser
        self.sent: Any = None     # the plain JSON of the last update, ``None`` before one
        self._sent_size = 0

    def feed(self, event: UniEvent) -> Any:
        """Take one event; the snapshot's plain JSON when an update is due, else ``None``."""
        before = self.parser.collected
        self.parser.feed(event)
        grown = self.parser.collected - before
        if not grown:
            return None
        if self._sent_size >= _SMALL and self.parser.collected < self._sent_size * 9 // 8:
            return None
        value = plain(self.parser.snapshot)
        if value is None or value == self.sent:
            return None
        return self._mark(value)

    def final(self, value: Any) -> Any:
        """The final object's plain JSON, to send last (always)."""
        return self._mark(plain(value))

    def _mark(self, value: Any) -> Any:
        self.sent = value
        self._sent_size = max(self.parser.collected, len(to_json(value)))
        return value


def json_patch(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """The RFC 6902 operations that turn ``old`` into ``new`` (JSON values)."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in new.items():
            where = f"{path}/{_escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": where, "value": value})
            elif old[key] != value:
                ops += json_patch(old[key], value, where)
        return ops
    if isinstance(old, list) and isinstance(new, list):
        ops = []
        common = min(len(old), len(new))
        for index in range(common):
            if old[index] != new[index]:
                ops += json_patch(old[index], new[index], f"{path}/{index}")
        for index in range(len(old) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": f"{path}/{index}"})
        for index in range(common, len(new)):
            ops.append({"op": "add", "path": f"{path}/{index}", "value": new[index]})
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": path, "value": new}]


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
