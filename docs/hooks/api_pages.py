"""mkdocs hook: the site's pages that are generated, so they never fall behind the code.

* ``index.md`` is the README (its links into ``docs/`` made site-relative);
* ``api/<module>.md`` is one page per public module of the ``streamflow`` package
  (every ``.py`` file and package whose dotted name has no part starting with
  ``_``), each rendered by mkdocstrings from the module's docstrings;
* the navigation lists the guides, then the API pages grouped by subpackage;
* on every page, a link to a file outside the site (``../examples/x.py``, which
  GitHub follows) becomes its label, plain text.

Nothing is imported: the module list comes from the source tree, and mkdocstrings
reads the sources statically, so the site builds the same on the pure and the
compiled build, offline.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.structure.files import Files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "streamflow"
GUIDES = [("Home (README)", "index.md"), ("Getting started", "getting-started.md"),
          ("Streaming", "streaming.md"), ("Pipelines, operators and sinks", "pipelines.md"),
          ("Dialects and converting", "dialects.md"),
          ("Structured output", "structured-output.md"), ("Agents and tools", "agents.md"),
          ("MCP tools", "mcp.md"), ("Browser UIs", "web.md"),
          ("Resumable streams (Redis)", "resume.md"),
          ("Deploying: processes, machines, a Redis Cluster", "deployment.md"),
          ("Gateway", "gateway.md"),
          ("Failover: answers that survive a failing provider", "failover.md"),
          ("Errors, faults and limits", "FAULTS.md"),
          ("Performance and the compiled build", "performance.md"),
          ("Command line", "cli.md"), ("Encoders: what each target carries", "ENCODERS.md"),
          ("Security", "SECURITY.md"), ("Architecture", "ARCHITECTURE.md")]
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")


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


def outside_links_as_text(text: str, folder: Path) -> str:
    """``text`` with each link to a file outside ``docs/`` (resolved from ``folder``) as
    its label: the site holds only ``docs/``, and GitHub follows such links itself. A
    link to the README is one to the home page, ``index.md``."""
    docs = (ROOT / "docs").resolve()

    def outside(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if target.startswith(("http://", "https://", "mailto:", "#")):
            return match.group(0)
        file, hash_, anchor = target.partition("#")
        path = (folder / file).resolve()
        if path == (ROOT / "README.md").resolve():
            return f"[{label}]({os.path.relpath(docs / 'index.md', folder)}{hash_}{anchor})"
        return match.group(0) if path.is_relative_to(docs) and path.exists() else label

    return LINK.sub(outside, text)


def _readme() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = outside_links_as_text(text, ROOT)
    text = re.sub(r"\]\(docs/", "](", text)  # docs/X.md -> X.md inside the site
    api = ("\n\n## API reference\n\nOne page per public module, from its docstrings: "
           "start at [streamflow](api/streamflow.md).\n")
    return text + api


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """A guide's links to files outside the site (``../examples/...``) as plain text."""
    source = getattr(page.file, "abs_src_path", None)
    if page.file.src_uri == "index.md" or source is None:
        return markdown  # the README: done in _readme, relative to the repository root
    return outside_links_as_text(markdown, Path(source).parent)


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
