"""A plain typed Python function as a tool: its JSON schema and argument validation.

:func:`tool_from_function` reads the signature with :mod:`inspect`, builds a pydantic
model of the parameters with :func:`pydantic.create_model` (type hints, defaults,
``Annotated[..., Field(description=...)]``), and keeps its JSON schema as the tool's
``parameters``. The docstring's first paragraph is the tool's description; a
Google-style ``Args:`` section describes the parameters that have no description yet.

Validation is pydantic's (lax mode, unknown arguments forbidden); a
:class:`pydantic.ValidationError` is what :meth:`Tool.validate` raises, so the caller
can hand its structured ``errors()`` back to the model. Sans-IO: nothing here runs.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Tool:
    """A registered tool: a name, a description, a JSON schema and the function it runs.

    ``timeout`` (seconds) overrides the dispatcher's default for this tool; ``None``
    keeps the default. ``is_async`` is true for ``async def`` functions and async
    generators (a tool reporting :class:`~streamflow.app.tools.Progress`).
    ``needs_approval`` holds a call for a person's decision before it runs: ``True``
    for every call, or a predicate on the call's arguments (see :meth:`requires_approval`).
    """

    name: str
    description: str
    func: Callable[..., Any]
    parameters: dict[str, Any]
    model: type[BaseModel]
    is_async: bool
    timeout: float | None = None
    param_names: tuple[str, ...] = field(default=())
    needs_approval: bool | Callable[[dict[str, Any]], bool] = False

    def requires_approval(self, arguments: Any) -> bool:
        """True when a call with ``arguments`` waits for approval before it runs.

        A predicate gets the model's arguments object (a call whose arguments are not
        an object is not held: it fails validation anyway).
        """
        rule = self.needs_approval
        if not callable(rule):
            return bool(rule)
        return isinstance(arguments, dict) and bool(rule(arguments))

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for :attr:`func`, validated and converted by pydantic.

        Raises :class:`pydantic.ValidationError` for missing, unknown or ill-typed
        arguments.
        """
        parsed = self.model.model_validate(arguments)
        return {name: getattr(parsed, name) for name in self.param_names}

    def spec(self) -> dict[str, Any]:
        """The provider-neutral tool spec: ``{"name", "description", "parameters"}``."""
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters}


def _docstring_parts(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (first paragraph) and the ``Args:`` entries of a docstring."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return "", {}
    description = " ".join(text.split("\n\n", 1)[0].split())
    args: dict[str, str] = {}
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines)
                     if line.strip() in ("Args:", "Arguments:", "Parameters:"))
    except StopIteration:
        return description, args
    base: int | None = None
    current: str | None = None
    for line in lines[start + 1:]:
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            break  # the next section ("Returns:")
        base = indent if base is None else base
        match = _ARG_LINE.match(stripped)
        if indent == base and match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current is not None:
            args[current] = f"{args[current]} {stripped}".strip()
    return description, args


def tool_from_function(func: Callable[..., Any], *, name: str | None = None,
                       description: str | None = None,
                       timeout: float | None = None,
                       needs_approval: bool | Callable[[dict[str, Any]], bool] = False) -> Tool:
    """Build a :class:`Tool` from a typed function (sync, ``async def`` or an async
    generator yielding :class:`~streamflow.app.tools.Progress` reports, then its result).

    Every parameter becomes a property of the JSON schema; one without a default is
    required; a missing annotation reads as ``Any``. ``*args``/``**kwargs`` are
    rejected with ``TypeError`` (a model cannot call them meaningfully), and so is a
    name providers would refuse (``[A-Za-z0-9_-]{1,64}``).
    """
    tool_name = name or func.__name__
    if not _NAME.match(tool_name):
        raise ValueError(f"tool name {tool_name!r} must match [A-Za-z0-9_-]{{1,64}}")
    signature = inspect.signature(func)
    try:
        hints = get_type_hints(func, include_extras=True)
    except (NameError, TypeError):
        hints = dict(getattr(func, "__annotations__", {}))
    doc_description, doc_args = _docstring_parts(func.__doc__)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name!r}: *args/**kwargs parameters are not supported")
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"tool {tool_name!r}: positional-only parameter {param.name!r}")
        annotation = hints.get(param.name, Any)
        default: Any = ... if param.default is param.empty else param.default
        if param.name in doc_args and not _has_description(annotation, default):
            default = Field(default, description=doc_args[param.name])
        fields[param.name] = (annotation, default)
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        parameters = model.model_json_schema()
    except PydanticUserError as exc:  # a hint that names a class it cannot see
        raise TypeError(f"tool {tool_name!r}: cannot resolve its type hints: {exc}") from None
    parameters.pop("title", None)
    for prop in parameters.get("properties", {}).values():
        prop.pop("title", None)
    parameters.setdefault("properties", {})
    return Tool(
        name=tool_name,
        description=description if description is not None else doc_description,
        func=func,
        parameters=parameters,
        model=model,
        is_async=(inspect.iscoroutinefunction(inspect.unwrap(func))
                  or inspect.isasyncgenfunction(inspect.unwrap(func))),
        timeout=timeout,
        param_names=tuple(fields),
        needs_approval=needs_approval,
    )


def _has_description(annotation: Any, default: Any) -> bool:
    """True if the parameter already carries a ``Field(description=...)``."""
    if getattr(default, "description", None):
        return True
    return any(getattr(m, "description", None) for m in getattr(annotation, "__metadata__", ()))
