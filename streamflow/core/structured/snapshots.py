"""Partial snapshots of growing JSON text: typed, never raising, only growing.

:class:`Snapshots` turns the JSON text received so far into a value of the derived
partial type (:func:`~streamflow.core.structured.partial_type`), parsed with
``pydantic_core.from_json(allow_partial="trailing-strings")``:

* a trailing number is left out until it ends (``1`` may still become ``17``);
* what the partial type cannot hold yet (a cut ``Literal``, a value of the wrong type) is
  left out, and the rest is still shown;
* a parse that would lose what an earlier one showed keeps the earlier snapshot, so a
  field once present never disappears and a value only grows (a cut string lengthens, a
  list gains items).

Each :meth:`Snapshots.update` costs one partial parse and one validation of the text, so
callers run it lazily, at most once per new fragment (``OutputParser.snapshot``,
``ToolCallState.partial``).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json

from .partial_types import partial_type

__all__ = ["Snapshots"]

_NUMBER_TAIL: Final = frozenset("0123456789+-.eE")


class Snapshots:
    """The latest partial snapshot of a growing JSON value; ``output=None``: plain JSON."""

    __slots__ = ("_adapter", "_plain", "value")

    def __init__(self, output: Any = None) -> None:
        self._adapter = None if output is None else TypeAdapter(partial_type(output))
        self._plain: Any = None
        self.value: Any = None
        """The snapshot: a partial instance, a plain JSON value, or ``None`` before any."""

    def update(self, text: str) -> Any:
        """Take the JSON text so far; returns :attr:`value` (kept when ``text`` adds nothing)."""
        plain = _parse_partial(text)
        if plain is None:
            return self.value
        value = plain
        if self._adapter is not None:
            try:
                value = self._adapter.validate_python(plain)
            except ValidationError as exc:
                for error in exc.errors(include_url=False):
                    _prune(plain, error["loc"])
                try:
                    value = self._adapter.validate_python(plain)
                except ValidationError:
                    return self.value
        if _covers(plain, self._plain):
            self._plain, self.value = plain, value
        return self.value


def _parse_partial(text: str) -> Any:
    """The JSON value ``text`` starts, or ``None``; a number that may still grow is left out."""
    text = text.strip()
    if not text:
        return None
    try:
        value = from_json(text, allow_partial="trailing-strings", allow_inf_nan=False)
    except ValueError:
        return None
    if text[-1] in _NUMBER_TAIL:
        try:
            return from_json(text, allow_inf_nan=False)  # a whole document ends in a digit
        except ValueError:
            _drop_last_number(value)
    return value


def _drop_last_number(value: Any) -> None:
    """Remove the last leaf of ``value`` when it is a number (its digits may be cut)."""
    while isinstance(value, (dict, list)) and value:
        key: Any = next(reversed(value)) if isinstance(value, dict) else len(value) - 1
        last = value[key]
        if isinstance(last, (dict, list)):
            value = last
            continue
        if isinstance(last, (int, float)) and not isinstance(last, bool):
            del value[key]
        return


def _prune(value: Any, loc: tuple[Any, ...]) -> None:
    """Remove the value at ``loc`` (a list is cut there); stops where ``loc`` leaves ``value``."""
    for depth, key in enumerate(loc):
        last = depth == len(loc) - 1
        if isinstance(value, dict) and key in value:
            if last or not isinstance(value[key], (dict, list)):
                del value[key]
                return
            value = value[key]
        elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
            if last or not isinstance(value[key], (dict, list)):
                del value[key:]
                return
            value = value[key]
        else:
            return  # a union tag or a key the error names but the value lacks


def _covers(new: Any, old: Any) -> bool:
    """Whether snapshot ``new`` keeps everything ``old`` showed (values only grow).

    JSON grows at its end, so only the last value of each container can have changed:
    the walk follows that spine (O(depth)), the rest was whole in ``old`` already.
    """
    while old is not None:
        if isinstance(old, dict):
            if not isinstance(new, dict) or len(new) < len(old):
                return False
            if not old:
                return True
            key = next(reversed(old))
            if key not in new:
                return False
            new, old = new[key], old[key]
        elif isinstance(old, list):
            if not isinstance(new, list) or len(new) < len(old):
                return False
            if not old:
                return True
            new, old = new[len(old) - 1], old[-1]
        elif isinstance(old, str):
            return isinstance(new, str) and new.startswith(old)
        else:
            return bool(new == old)
    return True


