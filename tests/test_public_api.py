"""The public API: the top-level names listed, typed and documented; every public module's
exports pinned (``tests/public_api.txt``); ``__all__`` only on the public surface."""

from __future__ import annotations

import ast
import importlib
import pydoc
import re
import sys
import types
from pathlib import Path

import pytest

import streamflow
import streamflow.reactive.sources
from streamflow import ToolCallItem


def test_dir_lists_the_public_names_only() -> None:
    names = dir(streamflow)
    for name in ("stream", "stream_sync", "run", "pipeline", "Agent", "RenderSink", "scope"):
        assert name in names and name in streamflow.__all__
    for clutter in ("annotations", "_lazy", "lazy_exports", "TYPE_CHECKING"):
        assert clutter not in names
    assert all(hasattr(streamflow, name) for name in streamflow.__all__)


def test_replay_source_is_exported_from_sources() -> None:
    from streamflow.reactive.sources.replay import ReplaySource

    assert streamflow.reactive.sources.ReplaySource is ReplaySource
    assert "ReplaySource" in streamflow.reactive.sources.__all__
    assert "ReplaySource" in dir(streamflow.reactive.sources)


def test_help_lists_the_parameters() -> None:
    for function, params in [(streamflow.run, ["source", "*sinks", "dialect", "framing", "limits"]),
                             (streamflow.stream, ["source", "dialect", "sinks", "buffer"]),
                             (streamflow.pipeline, ["dialect", "framing", "limits"])]:
        text = pydoc.render_doc(function, renderer=pydoc.plaintext)
        assert "Args:" in text
        for param in params:
            assert f"{param}:" in text, (function, param)


def test_typed_accessors() -> None:
    done = ToolCallItem("tool_call.done", name="f", tool_call_id="c", arguments={"x": 1})
    assert done.parsed_arguments == {"x": 1}
    fragment = ToolCallItem("tool_call.delta", arguments='{"x"')
    try:
        fragment.parsed_arguments  # noqa: B018
    except TypeError as exc:
        assert "tool_call.done" in str(exc)
    else:
        raise AssertionError("a delta fragment has no parsed arguments")
    usage = streamflow.Usage(prompt_tokens=3)
    assert streamflow.Message(usage_metadata=usage).usage is usage


def test_the_tools_docs_name_the_sink_the_readme_names() -> None:
    import streamflow.app.tools

    assert "ToolDispatchSink" in (streamflow.app.tools.__doc__ or "")


# -- the public surface, pinned ------------------------------------------------------------
# The public API is the facades below (at most 40 modules, as small libraries keep it:
# h11 has one, httpx one, reactivex a handful): the documentation, the README and the
# examples import from nothing else, and the modules under them (a dialect folder's
# decode.py, encode.py, wire.py; a package's implementation modules) may change in a
# minor release. ``tests/public_api.txt`` lists each facade with the exact names it
# exports: its ``__all__``, or, without one, its top-level public names. A change to the
# API shows up as a diff of that file: regenerate it with ``python tests/test_public_api.py``
# and note the change in CHANGELOG.md.

ROOT = Path(__file__).resolve().parents[1]
PINNED = Path(__file__).resolve().parent / "public_api.txt"
FACADES = [
    "streamflow",
    "streamflow.core", "streamflow.core.errors", "streamflow.core.events",
    "streamflow.core.limits", "streamflow.core.message", "streamflow.core.requests",
    "streamflow.core.structured",
    "streamflow.wire", "streamflow.wire.decoder", "streamflow.wire.encoding",
    "streamflow.wire.redaction", "streamflow.wire.framing", "streamflow.wire.dialects",
    "streamflow.wire.dialects.base", "streamflow.wire.dialects.request_base",
    "streamflow.wire.targets", "streamflow.wire.recordings",
    "streamflow.reactive", "streamflow.reactive.operators", "streamflow.reactive.sinks",
    "streamflow.reactive.sources", "streamflow.reactive.types",
    "streamflow.app", "streamflow.app.runtime", "streamflow.app.streaming",
    "streamflow.app.agent", "streamflow.app.providers", "streamflow.app.models",
    "streamflow.app.tools", "streamflow.app.tools.dispatch",
    "streamflow.servers", "streamflow.servers.gateway", "streamflow.servers.web",
    "streamflow.servers.web.resume", "streamflow.servers.replay",
    "streamflow.demo", "streamflow.demo.tools", "streamflow.faults", "streamflow.cli",
]
"""The public modules (see above)."""


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def _exports(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = ast.literal_eval(node.value)  # type: ignore[arg-type]
            return list(value)
    return None


def _top_level_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return sorted(n for n in set(names) if not n.startswith("_"))


def surface() -> dict[str, list[str]]:
    """Every facade -> the names it exports (read from the sources, nothing imported)."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "streamflow").rglob("*.py")):
        module = _dotted(path)
        if module not in FACADES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = _exports(tree)
        out[module] = sorted(exported) if exported is not None else _top_level_names(tree)
    return dict(sorted(out.items()))


def render_surface() -> str:
    return "".join(f"{module}: {' '.join(names)}\n" for module, names in surface().items())


def test_the_public_api_is_pinned() -> None:
    assert PINNED.read_text(encoding="utf-8") == render_surface(), (
        "the public API changed: regenerate tests/public_api.txt with "
        "`python tests/test_public_api.py` and note the change in CHANGELOG.md")


def test_the_facades_are_few_and_real() -> None:
    assert len(FACADES) <= 40 and len(set(FACADES)) == len(FACADES)
    assert sorted(surface()) == sorted(FACADES)  # each is a module of the package
    assert not [f for f in FACADES if _is_private(f)]


_IMPORT = re.compile(r"^\s*(?:from\s+(streamflow[\w.]*)\s+import|import\s+(streamflow[\w.]*))",
                     re.M)


def test_the_docs_and_examples_import_only_the_facades() -> None:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "examples").rglob("*.py"))]
    outside = sorted({f"{path.relative_to(ROOT)}: {a or b}" for path in texts
                      for a, b in _IMPORT.findall(path.read_text(encoding="utf-8"))
                      if (a or b) not in FACADES})
    assert outside == [], "import these from a facade (tests/test_public_api.py FACADES)"


def test_only_the_public_surface_declares_all() -> None:
    declaring = [_dotted(p) for p in sorted((ROOT / "streamflow").rglob("*.py"))
                 if _is_private(_dotted(p))
                 and _exports(ast.parse(p.read_text(encoding="utf-8"))) is not None]
    assert declaring == []


def test_no_public_module_exports_a_private_name_or_module() -> None:
    for module, names in surface().items():
        assert not [n for n in names if n.startswith("_")], module


CORE_PACKAGES = ["streamflow", "streamflow.reactive.operators", "streamflow.reactive.sources",
                 "streamflow.reactive.sinks", "streamflow.wire.dialects", "streamflow.wire.framing",
                 "streamflow.app.streaming", "streamflow.wire.targets", "streamflow.core.recording",
                 "streamflow.reactive.types"]


@pytest.mark.parametrize("name", CORE_PACKAGES)
def test_no_private_module_is_re_exported(name: str) -> None:
    module = importlib.import_module(name)
    for export in getattr(module, "__all__", []):
        value = getattr(module, export)
        if isinstance(value, types.ModuleType):
            assert not _is_private(value.__name__), (name, export)
    listed = [n for n in dir(module) if isinstance(getattr(module, n, None), types.ModuleType)
              and n in getattr(module, "__all__", [])]
    assert not [n for n in listed if n.startswith("_")]


if __name__ == "__main__":
    PINNED.write_text(render_surface(), encoding="utf-8")
    sys.stdout.write(f"wrote {PINNED.relative_to(ROOT)}\n")
