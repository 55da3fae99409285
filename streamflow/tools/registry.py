"""The tool registry: named :class:`~streamflow.tools.schema.Tool` objects, by decorator or call.

::

    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str, unit: Literal["C", "F"] = "C") -> dict:
        '''Current weather for a city.'''

    tools.register(search, timeout=5)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar, overload

from .schema import Tool, tool_from_function

__all__ = ["ToolRegistry"]

F = TypeVar("F", bound=Callable[..., Any])


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
                 description: str | None = None, timeout: float | None = None) -> Tool:
        """Register a typed function (sync or async) and return its :class:`Tool`."""
        return self.add(tool_from_function(func, name=name, description=description,
                                           timeout=timeout))

    @overload
    def tool(self, func: F, /) -> F: ...

    @overload
    def tool(self, func: None = None, /, *, name: str | None = None, description: str | None = None,
             timeout: float | None = None) -> Callable[[F], F]: ...

    def tool(self, func: Any = None, /, *, name: str | None = None,
             description: str | None = None, timeout: float | None = None) -> Any:
        """Decorator form of :meth:`register`; the function is returned unchanged."""
        def decorate(f: F) -> F:
            self.register(f, name=name, description=description, timeout=timeout)
            return f

        return decorate(func) if func is not None else decorate

    @classmethod
    async def from_mcp(cls, session: Any, **options: Any) -> ToolRegistry:
        """The tools of an initialized MCP ``ClientSession`` (see :mod:`streamflow.tools.mcp`)."""
        from .mcp import from_mcp

        return await from_mcp(session, registry=cls(), **options)

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
