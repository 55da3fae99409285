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

With ``tools=`` (a :class:`~streamflow.app.tools.ToolRegistry`) each call of a registered
tool is typed while it streams: :attr:`ToolCallState.partial` is an instance of the
tool's partial parameter model (every field optional; see
:func:`streamflow.core.structured.partial_type`), and at the ``.done`` the complete
arguments are validated against the tool's schema: :attr:`ToolCallState.errors` holds
pydantic's error list when they do not fit (the call is still delivered, so an agent can
send the errors back to the model), ``validated`` the converted arguments when they do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from reactivex import abc

from ...core._tools._registry import ToolRegistry
from ...core._tools._schema import Tool
from ...core.events import ToolCallItem, UniEvent
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.partial_json import ArgumentBuffer, parse_arguments
from ...core.structured.snapshots import Snapshots
from ._base import Handlers, Operator, stateful

__all__ = ["ToolCallState", "accumulate_json"]


@dataclass(eq=False)
class ToolCallState:
    """A tool call as it streams: name and id, the growing argument text, and at the end the object.

    ``index`` counts tool calls from 0 within the stream; ``done`` turns True with
    ``arguments`` set to the strictly parsed object. ``tool`` is the registered tool of
    that name (with ``accumulate_json(tools=...)``), which types :attr:`partial`,
    :attr:`validated` and :attr:`errors`.
    """

    index: int
    name: str
    tool_call_id: str
    buffer: ArgumentBuffer = field(repr=False)
    done: bool = False
    arguments: dict[str, Any] | None = None
    item: ToolCallItem | None = field(default=None, repr=False)
    tool: Tool | None = field(default=None, repr=False)
    validated: dict[str, Any] | None = None
    errors: list[dict[str, Any]] | None = None
    _typed: Snapshots | None = field(default=None, repr=False)
    _typed_at: int = field(default=-1, repr=False)

    @property
    def partial(self) -> Any:
        """The arguments so far as the tool's partial model (``None``: no tool, or nothing yet).

        Parsed when read, at most once per new fragment; never raises; fields only appear
        and values only grow.
        """
        if self.tool is None:
            return None
        if self._typed is None:
            self._typed = Snapshots(self.tool.model)
        if self._typed_at != len(self.buffer):
            self._typed_at = len(self.buffer)
            self._typed.update(self.buffer.text)
        return self._typed.value

    def check(self) -> None:
        """At the ``.done``: validate the arguments against the tool (sets the fields)."""
        if self.tool is None or self.arguments is None:
            return
        try:
            self.validated = self.tool.validate(self.arguments)
        except ValidationError as exc:
            self.errors = [{k: v for k, v in e.items() if k in ("type", "loc", "msg", "input")}
                           for e in exc.errors(include_url=False)]

    @property
    def text(self) -> str:
        """The argument text received so far."""
        return self.buffer.text

    def snapshot(self) -> Any:
        """The arguments so far, best effort (the parsed object once ``done``)."""
        return self.arguments if self.done else self.buffer.snapshot()


def accumulate_json(*, limits: Limits | None = None, tools: ToolRegistry | None = None
                    ) -> Operator[UniEvent, ToolCallState]:
    """An operator from UniEvents to :class:`ToolCallState` updates (tool calls only).

    ``tools`` types each registered tool's calls (see the module doc).
    """
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
                state.tool = tools.get(item.name) if tools is not None else None
                count += 1
            if item.type == "tool_call.done":
                args = item.arguments
                if not isinstance(args, dict):
                    args = parse_arguments(str(args), tool_call_id=state.tool_call_id,
                                           name=state.name)
                state.arguments, state.done, state.item = args, True, item
                state.check()
                current = None
            elif isinstance(item.arguments, str):
                state.buffer.append(item.arguments)
            observer.on_next(state)

        return on_next, observer.on_error, observer.on_completed

    return stateful(setup)
