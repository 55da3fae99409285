"""Lazy module attributes (PEP 562): a name's module is imported on first access.

Keeps ``import streamflow`` (and ``streamflow.reactive.sources``) free of the IO libraries
until a name that needs them is used.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from types import ModuleType
from typing import Any


def lazy_exports(namespace: dict[str, Any], table: dict[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a module whose ``table`` maps each lazy name
    to the module that defines it (absolute, or relative to the module's package)."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(target, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        """The public names (``__all__``, dunders, submodules) and the lazy ones."""
        public = set(namespace.get("__all__", ()))
        shown = {n for n, v in namespace.items()
                 if n in public or (n.startswith("__") and n.endswith("__"))
                 or (isinstance(v, ModuleType) and not n.startswith("_")
                     and v.__name__ == f"{package}.{n}")}
        return sorted(shown | set(table))

    return __getattr__, __dir__
