"""Build script: pure Python by default; ``STREAMFLOW_COMPILE=1`` compiles the hot path with mypyc.

The metadata lives in ``pyproject.toml``; this file only adds the compiled modules
(listed once, in ``streamflow/_build.py``). With ``STREAMFLOW_COMPILE=1``:

* ``mypy`` (which ships mypyc) and the runtime dependencies (which mypyc type-checks
  against) are requested as build requirements, the listed
  modules are compiled from the same ``.py`` files, and ``streamflow/_compiled.json``
  records the SHA-256 of each source so a later edit is detected at import time;
* without a C compiler or the Python headers, the build prints one line and
  installs pure Python.

``STREAMFLOW_COMPILE=0`` (the default) builds pure Python. An editable build first
removes the compiled modules an earlier editable build left in the tree.
See docs/performance.md, "Compiled build".
"""

from __future__ import annotations

import json
import os
import runpy
import shutil
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
_BUILD: dict[str, Any] = runpy.run_path(str(ROOT / "streamflow" / "_build.py"))
MODULES: tuple[str, ...] = _BUILD["COMPILED_MODULES"]
MYPY = "mypy>=1.10"
# mypyc type-checks the compiled modules against the packages they import: the build
# environment gets the runtime dependencies too, so a fresh environment compiles the same
DEPENDENCIES: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))[
    "project"]["dependencies"]


def _say(line: str) -> None:
    print(f"streamflow: {line}", file=sys.stderr, flush=True)


def _wanted() -> bool:
    value = os.environ.get("STREAMFLOW_COMPILE", "0").strip().lower()
    return value not in ("", "0", "false", "no", "off")


def _toolchain_missing() -> str | None:
    """Why C extensions cannot be built here (None when a compiler and headers exist)."""
    include = sysconfig.get_paths().get("include", "")
    if not include or not Path(include, "Python.h").exists():
        return "the Python headers (Python.h) are not installed"
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    if not cc or shutil.which(cc[0]) is None:
        return f"no C compiler ({cc[0] if cc else 'CC'}) found"
    return None


def _sources() -> list[str]:
    return [str(Path("streamflow", *m.split(".")[1:]).with_suffix(".py")) for m in MODULES]


def _remove_compiled_from_tree() -> None:
    """An editable build starts clean: no compiled module of an earlier build is left
    beside its ``.py`` (not even of a module no longer compiled)."""
    pkg = ROOT / "streamflow"
    for ext in pkg.rglob("*"):
        if ext.suffix in (".so", ".pyd") and ext.with_name(ext.name.split(".")[0] + ".py").exists():
            ext.unlink()
    for lib in ROOT.glob("streamflow__mypyc*"):
        lib.unlink()
    (pkg / _BUILD["MANIFEST"]).unlink(missing_ok=True)


class BuildExt(build_ext):
    """Builds the mypyc extensions, or falls back to pure Python when the C build fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any C build failure means: install pure
            _say(f"compiling failed ({type(exc).__name__}: {exc}); installing pure Python")
            self.extensions = []
            return
        target = (ROOT if self.inplace else Path(self.build_lib)) / "streamflow"
        digest = _BUILD["source_digest"]
        record = {"modules": {m: digest(ROOT / s) for m, s in zip(MODULES, _sources(),
                                                                   strict=True)}}
        target.mkdir(parents=True, exist_ok=True)
        (target / _BUILD["MANIFEST"]).write_text(json.dumps(record, indent=1) + "\n",
                                                  encoding="utf-8")

    def get_outputs(self) -> list[str]:
        outputs = super().get_outputs()
        if self.extensions and not self.inplace:
            outputs.append(str(Path(self.build_lib, "streamflow", _BUILD["MANIFEST"])))
        return outputs


_BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def _compiled() -> dict[str, Any]:
    """setup() arguments of the compiled build (or of the pure one when it cannot be)."""
    try:
        from mypyc.build import mypycify
    except ImportError:
        if _BUILDING & set(sys.argv[1:]):
            _say("STREAMFLOW_COMPILE=1 but mypy (mypyc) is not installed; installing pure Python")
            return {}
        # setuptools' build backend turns setup_requires into a build requirement of
        # the isolated build environment, and runs this file again with mypy in it
        return {"setup_requires": [MYPY, *DEPENDENCIES]}
    if not _BUILDING & set(sys.argv[1:]):
        return {}  # a metadata step: compiling now would only be thrown away
    missing = _toolchain_missing()
    if missing is not None:
        _say(f"STREAMFLOW_COMPILE=1 but {missing}; installing pure Python")
        return {}
    os.chdir(ROOT)  # mypycify wants paths relative to the project
    try:
        ext_modules = mypycify(_sources(), opt_level="3", group_name="streamflow")
    except (Exception, SystemExit) as exc:  # mypy's type errors exit via SystemExit
        _say(f"mypyc could not compile ({type(exc).__name__}: {exc}); installing pure Python")
        return {}
    return {"ext_modules": ext_modules, "cmdclass": {"build_ext": BuildExt}}


def _arguments() -> dict[str, Any]:
    if {"editable_wheel", "develop"} & set(sys.argv[1:]):
        _remove_compiled_from_tree()
    return _compiled() if _wanted() else {}


setup(**_arguments())
