"""Derive the *partial* type of an output type: every field optional, recursively.

``partial_type(Weather)`` is a pydantic model named ``PartialWeather`` whose fields all
default to ``None``, whose nested models are partial too, and whose lists, sets, tuples
and dicts hold partial values. A snapshot of a half-arrived JSON answer validates
against it; the final, complete answer is validated against the real type.

Supported: pydantic models, dataclasses, ``TypedDict`` (``total=False`` in the partial),
``list``/``set``/``frozenset``/``tuple``/``dict``, ``Optional``/``Union``, ``Annotated``
(the constraints are dropped: a cut string may be shorter than its ``min_length``) and
``Literal``/enums/scalars, which stay as they are (a value appears once it is whole).
Derived types are cached, and a recursive model derives once (forward references).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["partial_type"]

_CACHE: dict[Any, Any] = {}
_CONTAINERS: dict[Any, Any] = {list: list, set: set, frozenset: frozenset, tuple: tuple,
                               dict: dict}


def partial_type(tp: Any) -> Any:
    """The partial counterpart of ``tp`` (see the module doc); ``tp`` itself for scalars."""
    if not isinstance(tp, type) and not typing_extensions.is_typeddict(tp):
        return _derive(tp)  # a generic alias or union: cheap, built from cached parts
    cached = _CACHE.get(tp)
    if cached is None:
        cached = _derive(tp)
        _CACHE[tp] = cached
    return cached


def _derive(tp: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp)
    if typing_extensions.is_typeddict(tp):
        return _typeddict(tp)
    origin = get_origin(tp)
    if origin is Annotated:
        return partial_type(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        args = tuple(partial_type(arg) for arg in get_args(tp))
        return Union[args]  # noqa: UP007 - built from a tuple at run time
    if origin is Literal or origin is None:
        return tp
    container = _CONTAINERS.get(origin)
    if container is None:
        return tp
    args = get_args(tp)
    if container is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple[partial_type(args[0]), ...]  # type: ignore[misc]
        # a fixed-length tuple arrives item by item: a partial one may be shorter
        return tuple[Union[tuple(partial_type(a) for a in args)], ...]  # type: ignore[misc]  # noqa: UP007
    if container is dict:
        key, value = args or (str, Any)
        return dict[key, partial_type(value)]  # type: ignore[misc,valid-type]
    (item,) = args or (Any,)
    return container[partial_type(item)]


def _model(model: type[BaseModel]) -> type[BaseModel]:
    name = f"Partial{model.__name__}"
    # a forward reference first, so a model that refers to itself finds its partial
    _CACHE[model] = typing.ForwardRef(name)
    try:
        fields: dict[str, Any] = {}
        for field_name, info in model.model_fields.items():
            annotation = partial_type(info.annotation)
            fields[field_name] = (Optional[annotation],  # noqa: UP045 - a runtime type
                                  Field(default=None, alias=info.alias,
                                        validation_alias=info.validation_alias))
        config = ConfigDict(populate_by_name=True,
                            extra=model.model_config.get("extra") or "ignore")
        partial = create_model(name, __config__=config, __doc__=f"A partial {model.__name__}: "
                               "every field optional, recursively.", **fields)
        partial.model_rebuild(_types_namespace={name: partial})
    except BaseException:
        del _CACHE[model]
        raise
    return partial


def _dataclass(cls: type) -> type:
    hints = typing.get_type_hints(cls, include_extras=True)
    partial = dataclasses.make_dataclass(
        f"Partial{cls.__name__}",
        [(f.name, Optional[partial_type(hints[f.name])],  # noqa: UP045 - a runtime type
          dataclasses.field(default=None)) for f in dataclasses.fields(cls)])
    partial.__doc__ = f"A partial {cls.__name__}: every field optional, recursively."
    return partial


def _typeddict(cls: Any) -> Any:
    hints = typing.get_type_hints(cls, include_extras=True)
    # typing_extensions' TypedDict: pydantic needs it before Python 3.12
    return typing_extensions.TypedDict(  # type: ignore[operator]
        f"Partial{cls.__name__}", {k: partial_type(v) for k, v in hints.items()}, total=False)
