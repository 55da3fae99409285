"""The core is sans-IO: importing it must not pull in reactivex, anyio or httpx."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import streamflow

PACKAGE = Path(streamflow.__file__).parent
SANS_IO = ("core", "wire")  # the layers below the reactive one
FORBIDDEN = ("reactivex", "anyio", "httpx", "rich", "trio", "asyncio")


def core_modules() -> list[Path]:
    """Every module of the sans-IO layers, and the plumbing at the top."""
    return [p for layer in SANS_IO for p in (PACKAGE / layer).rglob("*.py")] + \
        [p for p in PACKAGE.glob("_*.py") if p.name != "__main__.py"]


def test_core_files_import_no_io_library() -> None:
    offenders = []
    for path in core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert core_modules(), "no core modules found"
    assert offenders == []


def test_importing_the_core_loads_no_io_library() -> None:
    code = ("import sys, streamflow, streamflow.wire.dialects.anthropic.decode, "
            "streamflow.wire.framing;"
            "import streamflow.wire.dialects as d;[d.get_dialect(n) for n in d.dialect_names()];"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_io_layer_is_exported_lazily_from_the_top_level() -> None:
    code = ("import sys, streamflow; assert 'reactivex' not in sys.modules;"
            "names = ['pipeline', 'run', 'run_sync', 'Agent', 'RenderSink', 'ToolDispatchSink'];"
            "assert all(n in dir(streamflow) for n in names);"
            "assert all(callable(getattr(streamflow, n)) for n in names);"
            "print('reactivex' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
