"""The one place streamflow validates with ``jsonschema``: a schema checked once, then bounded.

Every JSON schema streamflow validates values against -- an MCP tool's ``inputSchema``
(``tools/_mcp_tool.py``), a structured output's schema dict (``structured/output.py``) --
goes through :func:`checked_schema` when the tool is listed or the output is given, and
each value through :meth:`CheckedSchema.problems`:

* **references stay inside the schema.** A static walk of the whole schema (every
  object, also under ``default``/``examples``/``enum``: a JSON pointer can make any part
  of a schema a schema) resolves each ``$ref``/``$dynamicRef``/``$recursiveRef``
  against a :class:`referencing.Registry` holding the schema alone (its ``$defs``,
  ``definitions``, anchors and the ``$id``\\ s it defines). A reference outside it --
  ``http(s)://``, ``file://``, a relative ``other.json``, a ``urn:`` it does not define --
  or one that resolves nowhere in it is a :class:`~streamflow.core.errors.SchemaRefusedError`
  naming the tool. The validator is given that registry, whose ``retrieve`` raises, so
  even a reference found late (at validation) is never fetched nor read from disk;
* **the schema is bounded**: at most :data:`MAX_SCHEMA_BYTES` (about 1 MB of JSON,
  estimated while walking, so a 10 MB schema is refused after reading 1 MB of it) and
  :data:`MAX_SCHEMA_DEPTH` nested objects/arrays, checked before anything recursive
  (``jsonschema``'s own schema check included) runs;
* **one dialect**: the validator class is chosen from the root's ``$schema`` (2020-12
  when there is none or it is unknown); a known ``$schema`` deeper in the schema would
  switch ``jsonschema`` to its stock class, outside the bounds below, and is refused;
* **a validation is bounded**: every keyword evaluation counts against
  :data:`MAX_STEPS`, every error reported against :data:`MAX_ERRORS`, and keywords
  nest at most :data:`MAX_NESTING` deep, so a recursive
  ``{"$ref": "#"}``, mutual recursion through ``$defs``, or a schema whose ``anyOf``
  branches double at each level (2^n evaluations from a few lines) end with a problem
  at once instead of a ``RecursionError`` or minutes of CPU;
* **a failure is a problem, never an exception**: :meth:`CheckedSchema.problems` returns
  the violations and turns an unresolvable reference, a passed bound or anything else
  ``jsonschema`` raises into one :class:`SchemaProblem` (``keyword`` ``unresolvable``,
  ``too_complex``, ``error``), which the caller reports as its own validation error
  (a ``ValidationError`` tool result, an ``OutputValidationError``).

Not bounded here: the time one ``pattern`` regular expression takes on a string (Python's
``re`` has no timeout); see docs/SECURITY.md.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple
from urllib.parse import urljoin

from .errors import SchemaRefusedError

MAX_SCHEMA_BYTES: Final = 1 << 20
"""The largest schema accepted, in (estimated) characters of JSON."""
MAX_SCHEMA_DEPTH: Final = 64
"""The deepest nesting of objects and arrays accepted in a schema."""
MAX_STEPS: Final = 100_000
"""Steps allowed for one value: a keyword evaluation is one, a reference followed
(``$ref``...: a lookup and a new validator) :data:`REF_STEPS`. A 10,000-item array of
objects with two typed properties takes 50,000; the bound is a few tenths of a second
whatever the schema."""
REF_STEPS: Final = 5
"""The steps one reference followed counts."""
MAX_ERRORS: Final = 10_000
"""Errors the keywords may report for one value, counted at every level they pass
through (bounds the memory a failing ``anyOf`` keeps)."""
MAX_NESTING: Final = 128
"""How deep keyword evaluations may nest for one value (``$ref`` chains, recursion)."""

_REF_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef")


class SchemaProblem(NamedTuple):
    """One reason a value does not pass: the ``keyword`` that refused it (``type``,
    ``required``..., or ``unresolvable``/``too_complex``/``error`` for a failure of the
    check itself), a message, where in the value (``path``), and the value there."""

    keyword: str
    message: str
    path: tuple[str | int, ...]
    instance: Any


class _Exhausted(Exception):
    """A validation passed :data:`MAX_STEPS`, :data:`MAX_ERRORS` or :data:`MAX_NESTING`."""


class _Budget:
    """The steps, errors and nesting left to one :meth:`CheckedSchema.problems` call."""

    __slots__ = ("depth", "errors", "max_nesting", "steps")

    def __init__(self, steps: int, errors: int, max_nesting: int) -> None:
        self.steps = steps
        self.errors = errors
        self.depth = 0
        self.max_nesting = max_nesting


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "streamflow_json_schema_budget", default=None)


def _counted(keyword: Callable[..., Any], cost: int) -> Callable[..., Iterator[Any]]:
    """``keyword`` (a ``jsonschema`` keyword function) counting ``cost`` steps, its
    nesting and its errors against the budget."""

    @functools.wraps(keyword)
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        budget = _BUDGET.get()
        if budget is None:  # outside problems(): a plain keyword
            yield from keyword(validator, value, instance, schema) or ()
            return
        budget.steps -= cost
        budget.depth += 1
        try:
            if budget.steps < 0:
                raise _Exhausted(f"the schema took more than {MAX_STEPS} steps to check "
                                 "this value")
            if budget.depth > budget.max_nesting:
                raise _Exhausted(f"the schema's keywords nest more than "
                                 f"{budget.max_nesting} deep for this value "
                                 "(a recursive $ref?)")
            for error in keyword(validator, value, instance, schema) or ():
                budget.errors -= 1
                if budget.errors < 0:
                    raise _Exhausted(f"the schema reported more than {MAX_ERRORS} errors "
                                     "checking this value")
                yield error
        finally:
            budget.depth -= 1

    return counted


@functools.cache
def _bounded_class(cls: Any) -> Any:
    """``cls`` (a ``jsonschema`` validator class) with every keyword counted."""
    import jsonschema

    return jsonschema.validators.extend(
        cls, validators={name: _counted(fn, REF_STEPS if name in _REF_KEYWORDS else 1)
                         for name, fn in cls.VALIDATORS.items()})


def _refuse_to_retrieve(uri: str) -> Any:
    """The registry's ``retrieve``: no reference is ever fetched or read."""
    import referencing.exceptions

    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs


@dataclass(frozen=True, slots=True)
class CheckedSchema:
    """A schema that passed :func:`checked_schema`; :meth:`problems` checks values.

    ``validator`` is ``None`` when ``jsonschema`` cannot read the schema (and the
    caller asked to check it): nothing is validated then.
    """

    schema: Any
    name: str
    validator: Any

    def problems(self, instance: Any) -> list[SchemaProblem]:
        """Why ``instance`` does not pass, ordered by where in it; never raises."""
        if self.validator is None:
            return []
        token = _BUDGET.set(_Budget(MAX_STEPS, MAX_ERRORS, MAX_NESTING))
        try:
            return problems(self.validator, instance)
        finally:
            _BUDGET.reset(token)


def problems(validator: Any, instance: Any) -> list[SchemaProblem]:
    """The violations a ``jsonschema`` validator finds in ``instance``; a failure of the
    check itself (an unresolvable reference, a passed bound, any exception) is one
    problem. Never raises (:meth:`CheckedSchema.problems` adds the bounds)."""
    import referencing.exceptions

    try:
        errors = sorted(validator.iter_errors(instance), key=_where)
    except referencing.exceptions.Unresolvable as exc:
        ref = getattr(exc, "ref", None)
        return [SchemaProblem(
            "unresolvable", f"the schema's reference {ref!r} does not resolve inside the "
            "schema (nothing outside it is fetched)", (), instance)]
    except _Exhausted as exc:
        return [SchemaProblem("too_complex", str(exc), (), instance)]
    except RecursionError:
        return [SchemaProblem("too_complex", "the schema recursed too deep to check this "
                              "value", (), instance)]
    except Exception as exc:  # jsonschema on a schema it cannot apply (an unknown type...)
        return [SchemaProblem("error", f"the schema could not check this value: "
                              f"{type(exc).__name__}: {exc}", (), instance)]
    return [SchemaProblem(e.validator or "false", e.message, tuple(e.absolute_path), e.instance)
            for e in errors]


def _where(error: Any) -> list[tuple[bool, Any]]:
    """A sort key of an error's place in the value (indexes and keys never compared)."""
    return [(isinstance(part, str), part) for part in error.absolute_path]


def checked_schema(schema: Any, *, name: str, check: bool = True) -> CheckedSchema:
    """``schema`` ready to validate with, once it passed the checks of the module doc.

    ``name`` is the tool's name (``"output"`` for a structured output's schema), named
    by the :class:`~streamflow.core.errors.SchemaRefusedError` raised for a schema refused.
    ``check``: run ``jsonschema``'s own check of the schema first; a schema it finds
    invalid gives a ``CheckedSchema`` whose ``validator`` is ``None`` (nothing checked).
    """
    import jsonschema
    import referencing
    import referencing.jsonschema

    if not isinstance(schema, (Mapping, bool)):
        raise SchemaRefusedError(name, f"a schema is an object or a boolean, not "
                                 f"{type(schema).__name__}")
    cls: Any = jsonschema.Draft202012Validator
    working: Any = schema
    if isinstance(schema, Mapping):
        if isinstance(schema.get("$schema"), str):
            cls = jsonschema.validators.validator_for(schema, default=cls)
        # the dialect is chosen here; without it a $ref to the root keeps the bounded class
        working = {k: v for k, v in schema.items() if k != "$schema"}
    _bounded(working, name)
    specification = referencing.jsonschema.specification_with(
        cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
        default=referencing.Specification.OPAQUE)
    root = specification.create_resource(working)
    registry: Any = referencing.Registry(  # type: ignore[call-arg]  # an attrs class
        retrieve=_refuse_to_retrieve).with_resource(
        root.id() or "", root).crawl()
    _references_inside(working, name, specification, registry, root.id() or "")
    if check:
        try:
            cls.check_schema(schema)
        except Exception:  # jsonschema.SchemaError, or worse: the server validates it
            return CheckedSchema(schema, name, None)
    return CheckedSchema(schema, name, _bounded_class(cls)(working, registry=registry))


def _bounded(schema: Any, name: str) -> None:
    """Refuse a schema past :data:`MAX_SCHEMA_BYTES` or :data:`MAX_SCHEMA_DEPTH`, walking
    it without recursion and stopping at the first limit passed."""
    size = 0
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping | list | tuple):
            if depth >= MAX_SCHEMA_DEPTH:
                raise SchemaRefusedError(
                    name, f"it nests deeper than {MAX_SCHEMA_DEPTH} objects/arrays",
                    limit="max_schema_depth", maximum=MAX_SCHEMA_DEPTH)
            size += 2
            if isinstance(node, Mapping):
                for key, value in node.items():
                    size += len(key) + 4 if isinstance(key, str) else 8
                    stack.append((value, depth + 1))
            else:
                size += len(node)
                stack.extend((value, depth + 1) for value in node)
        elif isinstance(node, str):
            size += len(node) + 2
        else:
            size += 5
        if size > MAX_SCHEMA_BYTES:
            raise SchemaRefusedError(
                name, f"it is larger than {MAX_SCHEMA_BYTES} bytes of JSON",
                limit="max_schema_bytes", maximum=MAX_SCHEMA_BYTES)


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path) or "/"


def _references_inside(schema: Any, name: str, specification: Any, registry: Any,
                       base: str) -> None:
    """Refuse a reference anywhere in ``schema`` that does not resolve inside it, and a
    nested ``$schema`` naming a dialect (see the module doc). ``schema`` is bounded."""
    import jsonschema
    import referencing.exceptions

    seen: set[tuple[str, str]] = set()
    stack: list[tuple[Any, str, tuple[str | int, ...]]] = [(schema, base, ())]
    while stack:
        node, base_uri, path = stack.pop()
        if isinstance(node, list | tuple):
            stack.extend((v, base_uri, (*path, i)) for i, v in enumerate(node))
            continue
        if not isinstance(node, Mapping):
            continue
        try:
            node_id = specification.id_of(node)
        except Exception:
            node_id = None
        if isinstance(node_id, str) and node_id:
            base_uri = urljoin(base_uri, node_id)
        if path and isinstance(node.get("$schema"), str) and \
                jsonschema.validators.validator_for(node, default=None) is not None:
            raise SchemaRefusedError(
                name, f"it switches dialect inside itself ($schema at {_pointer(path)}), "
                "which is not supported")
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if not isinstance(ref, str) or (base_uri, ref) in seen:
                continue
            seen.add((base_uri, ref))
            where = _pointer((*path, keyword))
            try:
                registry.resolver(base_uri=base_uri).lookup(ref)
            except (referencing.exceptions.PointerToNowhere, referencing.exceptions.NoSuchAnchor,
                    referencing.exceptions.InvalidAnchor):
                raise SchemaRefusedError(
                    name, f"its reference {ref!r} at {where} resolves nowhere inside the "
                    "schema", ref=ref) from None
            except Exception:  # not in the registry (retrieve refused it), or not a URI
                raise SchemaRefusedError(
                    name, f"its reference {ref!r} at {where} points outside the schema "
                    "(only references inside it are resolved; nothing is fetched or read)",
                    ref=ref) from None
        stack.extend((v, base_uri, (*path, k)) for k, v in node.items())
