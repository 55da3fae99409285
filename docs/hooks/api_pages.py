"""mkdocs hook: the site's pages that are generated, so they never fall behind the code.

* ``index.md`` is the README (its links into ``docs/`` made site-relative, links to
  files outside the site turned into plain text);
* ``api/<module>.md`` is one page per public module of the ``streamflow`` package
  (every ``.py`` file and package whose dotted name has no part starting with
  ``_``), each rendered by mkdocstrings from the module's docstrings;
* the navigation lists the guides, then the API pages grouped by subpackage.

Nothing is imported: the module list comes from the source tree, and mkdocstrings
reads the sources statically, so the site builds the same on the pure and the
compiled build, offline.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.structure.files import Files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "streamflow"
GUIDES = [("Guide (README)", "index.md"), ("Architecture", "ARCHITECTURE.md"),
          ("Encoders: what each target carries", "ENCODERS.md"),
          ("Faults", "FAULTS.md"), ("Security", "SECURITY.md")]


def public_modules() -> list[str]:
    """Dotted names of the public modules and packages, sorted."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if any(p.startswith("_") for p in parts):
            continue
        names.append(".".join(parts))
    return sorted(set(names))


def _readme() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"\]\(docs/", "](", text)  # docs/X.md -> X.md inside the site

    def outside(match: re.Match[str]) -> str:  # a file beside the site: its name, no link
        label, target = match.group(1), match.group(2)
        if target.startswith(("http://", "https://", "#")) or (ROOT / "docs" / target).exists():
            return match.group(0)
        return label

    text = re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", outside, text)
    api = ("\n\n## API reference\n\nOne page per public module, from its docstrings: "
           "start at [streamflow](api/streamflow.md).\n")
    return text + api


def _api_page(module: str) -> str:
    return f"# `{module}`\n\n::: {module}\n    options:\n      show_submodules: false\n"


def on_files(files: Files, config: Any) -> Files:
    """Add the README as the home page and one API page per public module; set the nav."""
    from mkdocs.structure.files import File  # (the module list above needs no mkdocs)

    index = files.get_file_from_path("index.md")
    if index is not None:
        files.remove(index)
    files.append(File.generated(config, "index.md", content=_readme()))
    groups: dict[str, list[Any]] = {}
    for module in public_modules():
        uri = f"api/{module}.md"
        files.append(File.generated(config, uri, content=_api_page(module)))
        group = ".".join(module.split(".")[:2])
        groups.setdefault(group, []).append({module: uri})
    api: list[Any] = []
    for group, pages in groups.items():
        api.extend(pages if len(pages) == 1 else [{group: pages}])
    config["nav"] = [*({title: uri} for title, uri in GUIDES), {"API reference": api}]
    return files
