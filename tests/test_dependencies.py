"""Every import the package makes is declared in the dependencies of the part that makes it.

A new ``import foo`` in ``streamflow/`` fails here until ``foo``'s distribution is listed
in ``pyproject.toml``: in the core ``dependencies`` for the core, or in the extra of the
optional part (the gateway, the web, Redis, MCP, OpenTelemetry). A core module may reach
an optional package only lazily (inside a function, or guarded by ``except ImportError``),
and only one :data:`streamflow._extras.EXTRA_OF` names, so the error names the extra.
``.ci/installs`` proves the same on clean installs, one per extra.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pkgutil
import re
import sys
import tomllib
from pathlib import Path

import pytest

import streamflow
from streamflow._extras import EXTRA_OF, MissingExtra, install_line, require

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "streamflow"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

PART_OF = {  # a path under streamflow/ (a folder or a file prefix) -> the extra it belongs to
    "servers/gateway/": "gateway",
    "cli/gateway.py": "gateway",
    "cli/_workers.py": "gateway",
    "servers/web/": "web",
    "demo/_web.py": "web",
    "wire/targets/ag_ui/": "web",
    "reactive/_redis/": "redis",
    "app/tools/_mcp_": "mcp",
    "reactive/sinks/otel": "otel",
}


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement line (``"redis>=5.0"`` -> ``redis``)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]).lower()


CORE = {_name(r) for r in PROJECT["dependencies"]}
EXTRAS = {extra: {_name(r) for r in reqs}
          for extra, reqs in PROJECT["optional-dependencies"].items()}
DISTRIBUTIONS = importlib.metadata.packages_distributions()


def part(path: Path) -> str | None:
    """The extra ``path`` (a module of the package) belongs to; ``None`` for the core."""
    relative = path.relative_to(PACKAGE).as_posix()
    for prefix, extra in PART_OF.items():
        if relative.startswith(prefix):
            return extra
    return None


def third_party_imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """(top-level module, eager) of every absolute import of another project in ``tree``;
    eager is False inside a function or a ``try`` that catches ``ImportError``."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, eager: bool) -> None:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.partition(".")[0]
            if top not in sys.stdlib_module_names and top not in ("streamflow", "__future__"):
                found.append((top, eager))
        lazy = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or (
            isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError",
                                                               "ModuleNotFoundError")
                for h in node.handlers))
        for child in ast.iter_child_nodes(node):
            visit(child, eager and not lazy)

    visit(tree, True)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_every_import_is_declared_by_the_part_that_makes_it(path: Path) -> None:
    extra = part(path)
    declared = CORE | (EXTRAS[extra] if extra else set())
    for module, eager in third_party_imports(ast.parse(path.read_text(encoding="utf-8"))):
        distributions = {_name(d) for d in DISTRIBUTIONS.get(module, [module])}
        if distributions & declared:
            continue
        optional = EXTRA_OF.get(module)
        assert optional is not None and not eager, (
            f"{path.relative_to(ROOT)} imports {module} ({', '.join(sorted(distributions))}), "
            f"which {'the ' + extra + ' extra' if extra else 'the core'} does not declare")
        assert distributions & EXTRAS[optional], (
            f"EXTRA_OF says {module} comes with the {optional} extra, which does not list it")


def test_the_extra_map_names_only_extras_that_declare_the_module() -> None:
    for module, extra in EXTRA_OF.items():
        distributions = {_name(d) for d in DISTRIBUTIONS.get(module, [module])}
        assert distributions & EXTRAS[extra], (module, extra)
        assert not distributions & CORE, f"{module} is a core dependency, no extra's"


def test_the_scan_sees_an_undeclared_import(tmp_path: Path) -> None:
    tree = ast.parse("import numpy\ndef f():\n    import orjson\n"
                     "try:\n    import redis\nexcept ImportError:\n    pass\n")
    assert third_party_imports(tree) == [("numpy", True), ("orjson", False), ("redis", False)]


def test_every_module_imports_where_every_extra_is_installed() -> None:
    """The test install has every extra: no module of the package fails to import."""
    failed = {}
    for info in pkgutil.walk_packages(streamflow.__path__, "streamflow."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # pragma: no cover - the assertion shows it
            failed[info.name] = repr(exc)
    assert not failed


def test_a_missing_extra_is_one_line_naming_it() -> None:
    with pytest.raises(MissingExtra) as caught:
        require("streamflow.servers.web", "web", "starlette", "no_such_module_here")
    message = str(caught.value)
    assert message == ("streamflow.servers.web needs the web extra: "
                       "pip install 'streamflow-llm[web]' (no_such_module_here is not installed)")
    assert "\n" not in message and install_line("web") in message
    assert isinstance(caught.value, ModuleNotFoundError)  # `except ModuleNotFoundError` holds
    assert caught.value.name == "no_such_module_here"
    require("streamflow.servers.web", "web", "starlette")  # installed here: nothing raised
