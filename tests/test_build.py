"""Which build runs is visible, and a compiled module never shadows an edited ``.py``.

The guard (``streamflow/_build.py``) is exercised on copies of the installed
package in a temporary directory, in a fresh interpreter each time: with the real
compiled modules when this run is the compiled build, and with stand-in extension
files (which would fail to load if the guard let them through) on either build.
The last test type-checks a user script the way a user's mypy sees the package.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import streamflow
from streamflow import _build
from streamflow.cli.main import main

PACKAGE = Path(streamflow.__file__).resolve().parent
SO = EXTENSION_SUFFIXES[0]
PROBE = ("import warnings, sys; warnings.simplefilter('always');"
         "import streamflow, streamflow.core.events as e;"
         "print(streamflow.compiled, getattr(e, 'EDITED', False))")


def _copy_package(tmp_path: Path) -> Path:
    """A copy of the installed package (and the mypyc group library, if any) under tmp."""
    shutil.copytree(PACKAGE, tmp_path / "streamflow",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for lib in PACKAGE.parent.glob("streamflow__mypyc*"):
        shutil.copy2(lib, tmp_path / lib.name)
    return tmp_path / "streamflow"


def _probe(root: Path, **env: str) -> tuple[str, str]:
    """Import the copy under ``root`` in a fresh interpreter: (stdout, stderr)."""
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=root, capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(root), **env})
    return out.stdout.strip(), out.stderr


def _fake_compiled(pkg: Path, record: dict[str, str] | None) -> None:
    """Stand-in extension files for every compiled module (garbage: loading one fails)."""
    for name in _build.COMPILED_MODULES:
        src = pkg.joinpath(*name.split(".")[1:]).with_suffix(".py")
        src.with_name(src.stem + SO).write_bytes(b"not an extension module")
    if record is not None:
        (pkg / _build.MANIFEST).write_text(json.dumps({"modules": record}), encoding="utf-8")


def _record(pkg: Path) -> dict[str, str]:
    return {n: _build.source_digest(pkg.joinpath(*n.split(".")[1:]).with_suffix(".py"))
            for n in _build.COMPILED_MODULES}


def test_the_running_build_is_reported_the_same_everywhere(
        capsys: pytest.CaptureFixture[str]) -> None:
    origin = streamflow.core.events.__spec__.origin or ""
    assert streamflow.compiled == origin.endswith(tuple(EXTENSION_SUFFIXES))
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert ("compiled (mypyc)" in out) == streamflow.compiled
    assert ("pure Python" in out) != streamflow.compiled


def test_compiled_modules_without_a_build_record_are_never_loaded(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    (pkg / _build.MANIFEST).unlink(missing_ok=True)
    _fake_compiled(pkg, record=None)
    out, err = _probe(tmp_path)
    assert out == "False False"
    assert "without a build record" in err and "running pure Python" in err


def test_an_edited_source_is_never_shadowed_by_its_older_compiled_module(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_compiled(pkg, _record(pkg))
    events = pkg / "core" / "events.py"
    events.write_text(events.read_text(encoding="utf-8") + "\nEDITED = True\n",
                      encoding="utf-8")
    out, err = _probe(tmp_path)
    assert out == "False True"  # pure, and the edit is what runs
    assert "events.py changed after it was compiled" in err
    assert "STREAMFLOW_COMPILE=1 pip install -e ." in err


def test_streamflow_pure_forces_the_pure_build_without_a_warning(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_compiled(pkg, _record(pkg))
    out, err = _probe(tmp_path, STREAMFLOW_PURE="1")
    assert out == "False False"
    assert "Warning" not in err


@pytest.mark.skipif(not streamflow.compiled, reason="this run is the pure build")
def test_a_compiled_build_runs_compiled_until_a_source_is_edited(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    assert _probe(tmp_path) == ("True False", "")
    message = pkg / "core" / "message.py"  # any compiled module: the whole build turns pure
    message.write_text(message.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    out, err = _probe(tmp_path)
    assert out == "False False"
    assert "message.py changed after it was compiled" in err


@pytest.mark.slow
def test_a_users_mypy_finds_the_installed_package(tmp_path: Path) -> None:
    """After the README's editable install the package is a plain path entry for mypy."""
    script = tmp_path / "user.py"
    script.write_text("import streamflow\n\n"
                      "message = streamflow.assemble(b'', 'anthropic')\n"
                      "reveal_type(message)\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                          "--cache-dir", str(tmp_path / "cache"), str(script)],
                         cwd=tmp_path, capture_output=True, text=True)
    assert "Cannot find implementation" not in out.stdout, out.stdout
    assert 'Revealed type is "streamflow.core.message.Message"' in out.stdout, out.stdout
