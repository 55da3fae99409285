"""The documentation site: one API page per public module, from docstrings, built strictly.

The page list is generated (``docs/hooks/api_pages.py``) from the source tree, so a
new module gets its page without anyone editing a list; these tests hold that
generator to the package, and build the site the way CI does (``mkdocs build
--strict``: any warning fails), offline.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from realdata import ROOT

HOOKS = ROOT / "docs" / "hooks"
spec = importlib.util.spec_from_file_location("api_pages", HOOKS / "api_pages.py")
assert spec is not None and spec.loader is not None
api_pages = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api_pages)


def _source(module: str) -> Path:
    path = ROOT / Path(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def test_every_public_module_has_a_page_and_a_docstring() -> None:
    modules = api_pages.public_modules()
    assert "streamflow" in modules and "streamflow.wire.decoder" in modules
    assert "streamflow.cli.convert" in modules and "streamflow.servers.web.resume" in modules
    assert not [m for m in modules if any(p.startswith("_") for p in m.split("."))]
    files = {str(p.relative_to(ROOT).with_suffix("")).replace(os.sep, ".")
             for p in (ROOT / "streamflow").rglob("*.py")}
    public = {f.removesuffix(".__init__") for f in files
              if not any(p.startswith("_") for p in f.removesuffix(".__init__").split("."))}
    assert set(modules) == public
    undocumented = [m for m in modules if not ast.get_docstring(ast.parse(
        _source(m).read_text(encoding="utf-8")))]
    assert undocumented == []


def test_rest_roles_read_as_markdown() -> None:
    pytest.importorskip("griffe", reason="the docs extra is not installed")
    spec = importlib.util.spec_from_file_location("griffe_rst", HOOKS / "griffe_rst.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = ("Feeds :class:`~streamflow.wire.decoder.StreamDecoder` and "
            ":func:`streamflow.assemble`, :ref:`the guide <guide>`; for example::\n")
    assert module.markdown(text) == ("Feeds `StreamDecoder` and `streamflow.assemble`, "
                                     "`the guide`; for example:\n")


@pytest.mark.slow
def test_the_site_builds_strictly_offline(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: "
                                         "pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra is not installed")
    site = tmp_path / "site"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9")  # offline
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(site)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr
    for module in api_pages.public_modules():
        page = site / "api" / module / "index.html"
        assert page.is_file(), module
    decoder = (site / "api" / "streamflow.wire.decoder" / "index.html").read_text(encoding="utf-8")
    assert "StreamDecoder" in decoder and "THE decode loop" in decoder
    assert ":class:" not in decoder
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Quick start" in home and "api/streamflow/" in home
