"""``accumulate_json()``: UniEvents -> one live :class:`ToolCallState` per tool call.

Marble::

    events:            --text.delta--tc.delta('{"ci')--tc.delta('ty":"Paris"}')--tc.done--stop--|
    accumulate_json(): ---------------S0(open)----------S0(open)-------------------S0(done)------|

Only tool calls come out (compose it on a shared stream next to the UI). The same
state object is re-emitted on every fragment of its call, so a UI can keep it and
ask :meth:`ToolCallState.snapshot` whenever it repaints: the partial parse
(``pydantic_core`` ``allow_partial``) runs on demand, at most once per new
fragment, never per fragment by itself. At the ``.done`` item the arguments are
parsed strictly (or taken from the decoder, which already parsed them): malformed,
cut-short or non-object arguments are a ``ToolCallArgumentParseError`` on
``on_error``. ``limits.max_tool_arguments_bytes`` bounds one call's text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reactivex import abc

from ..events import ToolCallItem, UniEvent
from ..limits import DEFAULT_LIMITS, Limits
from ..partial_json import ArgumentBuffer, parse_arguments
from ._base import Handlers, Operator, stateful

__all__ = ["ToolCallState", "accumulate_json"]


@dataclass(eq=False)
class ToolCallState:
    """A tool call as it streams: name and id, the growing argument text, and at the end the object.

    ``index`` counts tool calls from 0 within the stream; ``done`` turns True with
    ``arguments`` set to the strictly parsed object.
    """

    index: int
    name: str
    tool_call_id: str
    buffer: ArgumentBuffer = field(repr=False)
    done: bool = False
    arguments: dict[str, Any] | None = None
    item: ToolCallItem | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """The argument text received so far."""
        return self.buffer.text

    def snapshot(self) -> Any:
        """The arguments so far, best effort (the parsed object once ``done``)."""
        return self.arguments if self.done else self.buffer.snapshot()


def accumulate_json(*, limits: Limits | None = None) -> Operator[UniEvent, ToolCallState]:
    """An operator from UniEvents to :class:`ToolCallState` updates (tool calls only)."""
    limit = (limits or DEFAULT_LIMITS).max_tool_arguments_bytes

    def setup(observer: abc.ObserverBase[ToolCallState]) -> Handlers:
        current: ToolCallState | None = None
        count = 0

        def on_next(event: UniEvent) -> None:
            nonlocal current, count
            items = event.content_items
            if not items or type(items[0]) is not ToolCallItem:
                return
            item: ToolCallItem = items[0]
            state = current
            if state is None:
                state = current = ToolCallState(count, item.name, item.tool_call_id,
                                                ArgumentBuffer(limit))
                count += 1
            if item.type == "tool_call.done":
                args = item.arguments
                if not isinstance(args, dict):
                    args = parse_arguments(str(args), tool_call_id=state.tool_call_id,
                                           name=state.name)
                state.arguments, state.done, state.item = args, True, item
                current = None
            elif isinstance(item.arguments, str):
                state.buffer.append(item.arguments)
            observer.on_next(state)

        return on_next, observer.on_error, observer.on_completed

    return stateful(setup)
