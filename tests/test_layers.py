"""Sinks and sources are two leaves: neither imports the other (what they share is below both).

The Source base lives in ``streamflow/_source.py``, the scope in ``_scope.py``, the Redis
entry layout, link and tailer in ``_redis/``, the recording format in ``recording.py``.
Read statically, with relative imports resolved, so a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import streamflow

PACKAGE = Path(streamflow.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, as absolute dotted names (relative ones resolved)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts[:-1]  # an __init__ is its package, whose relative base is itself
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize(("leaf", "other"), [("sinks", "sources"), ("sources", "sinks")])
def test_sinks_and_sources_import_neither_each_other(leaf: str, other: str) -> None:
    forbidden = f"streamflow.{other}"
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(m for m in imported_modules(path)
                                              if m == forbidden or m.startswith(forbidden + "."))
        for path in sorted((PACKAGE / leaf).rglob("*.py"))}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_shared_parts_import_neither() -> None:
    shared = [PACKAGE / "_source.py", PACKAGE / "_scope.py", PACKAGE / "recording.py",
              *sorted((PACKAGE / "_redis").rglob("*.py"))]
    for path in shared:
        leaves = [m for m in imported_modules(path)
                  if m.startswith(("streamflow.sinks", "streamflow.sources"))]
        assert leaves == [], path.name


def test_the_resolver_sees_a_relative_import(tmp_path: Path) -> None:
    seen = imported_modules(PACKAGE / "sinks" / "redis.py")
    assert "streamflow._redis.streams" in seen and "streamflow.errors" in seen
