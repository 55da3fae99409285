"""Which build runs: the mypyc-compiled hot path, or pure Python (and never a stale mix).

``COMPILED_MODULES`` is the one list of modules ``STREAMFLOW_COMPILE=1`` compiles
(``setup.py`` reads it from here). A compiled build sits beside the same ``.py``
files and records each one's SHA-256 in ``_compiled.json``. :func:`guard` runs
before any other streamflow module is imported: when a ``.py`` no longer matches
its compiled module (edited after an editable install), when compiled modules are
present without a matching record, or when ``STREAMFLOW_PURE=1`` is set, it puts
a finder in front of the import system that loads every compiled module from its
``.py`` instead. It is all or nothing: compiled modules call each other natively,
so one stale module turns the whole build pure (with one warning saying why).

This module imports nothing from streamflow and is never compiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import warnings
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import Any

COMPILED_MODULES: tuple[str, ...] = (
    "streamflow.core.events",
    "streamflow.core._items",
    "streamflow.core._grammar",
    "streamflow.core._budget",
    "streamflow.core.partial_json",
    "streamflow.core.message",
    "streamflow.core.delivery",
    "streamflow.core.continuation",
    "streamflow.wire.decoder",
    "streamflow.wire.framing.lines",
    "streamflow.wire.framing.sse",
    "streamflow.wire.framing.ndjson",
    "streamflow.wire.dialects.base",
    "streamflow.wire.dialects._emitter",
    "streamflow.wire.dialects.anthropic._blocks",
    "streamflow.wire.dialects.anthropic.decode",
    "streamflow.wire.dialects.openai_chat._calls",
    "streamflow.wire.dialects.openai_chat._choice",
    "streamflow.wire.dialects.openai_chat._chunk_fields",
    "streamflow.wire.dialects.openai_chat.decode",
    "streamflow.wire.dialects.openai_chat._parts",
    "streamflow.reactive._fanout",
    "streamflow.reactive.operators._base",
)
"""The hot path: framing, events, the budget, the emitter and assembler, a failover
chain's continuation, the decode loop, two dialects, ``run()``'s fan-out and the
operators' subscription guard."""

MANIFEST = "_compiled.json"
"""The build record beside this file: ``{"modules": {name: sha256 of its .py}, ...}``."""

PACKAGE = Path(__file__).resolve().parent
_state: dict[str, Any] = {"pure_reason": None}


def source_digest(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _source(name: str, root: Path = PACKAGE) -> Path:
    return root.joinpath(*name.split(".")[1:]).with_suffix(".py")


def _extensions(name: str, root: Path = PACKAGE) -> list[Path]:
    """The compiled modules standing beside ``name``'s ``.py`` (normally zero or one)."""
    py = _source(name, root)
    try:
        entries = os.listdir(py.parent)
    except OSError:
        return []
    stem = py.stem
    return [py.parent / e for e in entries
            if any(e == stem + suffix for suffix in EXTENSION_SUFFIXES)]


def _record(root: Path) -> dict[str, str] | None:
    """The build record's ``{module: sha256}`` (None when absent or unreadable)."""
    try:
        record = json.loads((root / MANIFEST).read_text(encoding="utf-8"))["modules"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def _stale_reason(root: Path, names: list[str]) -> str | None:
    """Why the compiled modules under ``root`` must not be used (None: none or all fine)."""
    present = [name for name in names if _extensions(name, root)]
    if not present:
        return None
    record = _record(root)
    if record is None:
        return f"compiled modules without a build record ({MANIFEST})"
    for name in present:
        try:
            digest: str | None = source_digest(_source(name, root))
        except OSError:
            digest = None
        if digest is None or record.get(name) != digest:
            return f"{_source(name, root).name} changed after it was compiled"
    return None


class _PureFinder(MetaPathFinder):
    """Loads the listed modules from their ``.py``, shadowing the compiled ones."""

    def __init__(self, root: Path, names: list[str]) -> None:
        self.root = root
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Any = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in self.names:
            return None
        return spec_from_file_location(fullname, _source(fullname, self.root))


def guard() -> None:
    """Make the imports that follow load pure Python when the compiled build is unusable.

    Runs when this module is first imported, which ``streamflow/__init__.py`` does first.
    """
    if any(isinstance(f, _PureFinder) for f in sys.meta_path):
        return
    # what this version compiles, and what the build on disk says it compiled
    names = sorted({*COMPILED_MODULES, *(_record(PACKAGE) or {})})
    if os.environ.get("STREAMFLOW_PURE", "") not in ("", "0"):
        reason: str | None = "STREAMFLOW_PURE is set"
    else:
        reason = _stale_reason(PACKAGE, names)
        if reason is not None:
            warnings.warn(
                f"streamflow: {reason}; running pure Python. Rebuild with "
                "`STREAMFLOW_COMPILE=1 pip install -e .` (or `STREAMFLOW_COMPILE=0` for pure).",
                RuntimeWarning, stacklevel=3)
    if reason is not None and any(_extensions(n) for n in names):
        sys.meta_path.insert(0, _PureFinder(PACKAGE, names))
    _state["pure_reason"] = reason


def is_compiled() -> bool:
    """True when the hot path runs compiled (``streamflow.core.events`` was loaded by mypyc)."""
    module = sys.modules.get("streamflow.core.events")
    origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
    return origin.endswith(tuple(EXTENSION_SUFFIXES))


def describe() -> str:
    """One phrase naming the build that runs, for ``streamflow --version``."""
    if is_compiled():
        return "compiled (mypyc)"
    reason = _state["pure_reason"]
    return f"pure Python ({reason})" if reason else "pure Python"


if __name__ == "streamflow._build":  # not when setup.py reads COMPILED_MODULES
    guard()
