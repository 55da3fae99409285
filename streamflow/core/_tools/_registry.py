"""The tool registry: named :class:`~streamflow.app.tools.Tool` objects, by decorator or call.

::

    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str, unit: Literal["C", "F"] = "C") -> dict:
        '''Current weather for a city.'''

    tools.register(search, timeout=5)

    @tools.tool(needs_approval=True)              # a person decides before it runs
    def delete_file(path: str) -> str: ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar, overload

from ._schema import Tool, tool_from_function

F = TypeVar("F", bound=Callable[..., Any])
Approval = bool | Callable[[dict[str, Any]], bool]
"""``needs_approval``: always, never, or a predicate on the call's arguments."""


class ToolRegistry:
    """Tools by name, in registration order; a duplicate name is a ``ValueError``."""

    def __init__(self, tools: Iterable[Callable[..., Any] | Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if isinstance(item, Tool):
                self.add(item)
            else:
                self.register(item)

    def add(self, tool: Tool) -> Tool:
        """Add an already built :class:`Tool`."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def register(self, func: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None, timeout: float | None = None,
                 needs_approval: Approval = False) -> Tool:
        """Register a typed function (sync, async, or an async generator reporting
        progress) and return its :class:`Tool`.

        ``needs_approval``: ``True`` (or a predicate on the call's arguments) holds the
        call until a person approves it (see :meth:`streamflow.Agent.resume`).
        """
        return self.add(tool_from_function(func, name=name, description=description,
                                           timeout=timeout, needs_approval=needs_approval))

    @overload
    def tool(self, func: F, /) -> F: ...

    @overload
    def tool(self, func: None = None, /, *, name: str | None = None, description: str | None = None,
             timeout: float | None = None, needs_approval: Approval = False
             ) -> Callable[[F], F]: ...

    def tool(self, func: Any = None, /, *, name: str | None = None,
             description: str | None = None, timeout: float | None = None,
             needs_approval: Approval = False) -> Any:
        """Decorator form of :meth:`register`; the function is returned unchanged."""
        def decorate(f: F) -> F:
            self.register(f, name=name, description=description, timeout=timeout,
                          needs_approval=needs_approval)
            return f

        return decorate(func) if func is not None else decorate

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """Provider-neutral specs (``name``, ``description``, ``parameters``) of every tool."""
        return [t.spec() for t in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
