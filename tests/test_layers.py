"""The house: layers you can see in the folder list, nothing importing upward, no circle.

``streamflow/`` holds five layers, lowest first -- ``core`` (sans-IO: events, grammar,
message, errors, limits, partial JSON), ``wire`` (framing, dialects, targets),
``reactive`` (scope, sources, operators, sinks), ``app`` (the run, the Agent, tools,
providers), ``servers`` (gateway, web, replay) -- then the edge (``demo``, ``faults``,
``cli``) and the top package, the facade. The plumbing (``_extras``, ``_lazy``,
``_build``) is below them all. A module may import its own layer and the layers below.

Read statically, relative imports resolved, so a lazy import inside a function and a
type-only import count as much as a top-level one; a sinks module and a sources module
import neither each other (what they share is below both).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import streamflow

PACKAGE = Path(streamflow.__file__).parent
LAYERS = ["plumbing", "core", "wire", "reactive", "app", "servers", "edge", "facade"]
PLUMBING = {"_extras", "_lazy", "_build"}
EDGE = {"demo", "faults", "cli"}
MOST_LOOSE_MODULES = 10


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path, known: set[str] | None = None) -> set[str]:
    """Every streamflow module ``path`` imports, as absolute dotted names: ``from a import
    b`` is ``a.b`` when that is a module, else ``a``."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    known = known if known is not None else set(all_modules())
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "streamflow")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "streamflow":
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in known else module)
    return {_owner(m, known) for m in found} - {name}


def _owner(module: str, known: set[str]) -> str:
    while module not in known and "." in module:
        module = module.rpartition(".")[0]
    return module


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return LAYERS.index("facade")
    top = parts[1]
    if top in PLUMBING:
        return LAYERS.index("plumbing")
    if top in EDGE:
        return LAYERS.index("edge")
    assert top in LAYERS, f"{module} is in no layer: put it in one of {LAYERS[1:6]}"
    return LAYERS.index(top)


def graph() -> dict[str, set[str]]:
    modules = all_modules()
    known = set(modules)
    return {name: imported_modules(path, known) for name, path in modules.items()}


def test_the_top_level_is_the_layers_and_a_few_modules() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    folders = sorted(p.name for p in PACKAGE.iterdir()
                     if p.is_dir() and (p / "__init__.py").exists())
    assert len(loose) <= MOST_LOOSE_MODULES, loose
    assert folders == sorted([*LAYERS[1:6], *EDGE])


def test_nothing_imports_upward() -> None:
    upward = sorted(f"{a} ({LAYERS[layer(a)]}) -> {b} ({LAYERS[layer(b)]})"
                    for a, imports in graph().items() for b in imports if layer(b) > layer(a))
    assert upward == []


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module (Tarjan). A
    package importing its own modules (its ``__init__`` re-exporting them) is no circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w.startswith(v + ".") or w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_at_most_one_import_circle() -> None:
    # the one left: an error carries the partial Message, which the grammar assembles and
    # whose violations are errors (streamflow.core: errors, message, _grammar)
    assert len(circles(graph())) <= 1, circles(graph())


def test_the_circle_finder_finds_a_circle_and_ignores_a_facade() -> None:
    edges = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p.a"}, "q": {"p"}}
    assert circles(edges) == [["p.a", "p.b"]]
    assert circles({"p": {"p.a"}, "p.a": set()}) == []


@pytest.mark.parametrize(("leaf", "other"), [("sinks", "sources"), ("sources", "sinks")])
def test_sinks_and_sources_import_neither_each_other(leaf: str, other: str) -> None:
    forbidden = f"streamflow.reactive.{other}"
    offenders = {name: sorted(m for m in imports if m == forbidden
                              or m.startswith(forbidden + "."))
                 for name, imports in graph().items()
                 if name.startswith(f"streamflow.reactive.{leaf}")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_resolver_sees_relative_lazy_and_submodule_imports() -> None:
    seen = imported_modules(PACKAGE / "reactive" / "sinks" / "redis.py")
    assert "streamflow.reactive._redis.streams" in seen and "streamflow.core.errors" in seen
    assert layer("streamflow.core.events") < layer("streamflow.servers.web")
    assert layer("streamflow") == LAYERS.index("facade")
