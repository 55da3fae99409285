"""The code blocks of the README and of every ``docs/*.md`` page, as a reader sees them.

A fence's language says what it is: ``python`` (a program), ``bash`` (commands, run as
one script), ``console`` (``$`` commands, each followed by the output it prints). A
block that cannot run as pasted says so on the line above it, in an HTML comment a
reader of the source sees: ``<!-- not run: why -->``. Used by ``tests/docs/`` and
``tests/test_examples.py``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
RUN_LANGS = {"python", "bash", "console"}
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.*?)\s*-->$")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and text, and why it is not run."""

    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    not_run: str | None  # the reason given in the comment above it, if any

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    """Every fenced block of ``page`` (a path relative to the repository root), in order."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, lang = opening.groups()
        end = i + 1
        while end < len(lines) and not lines[end].startswith(fence[0] * len(fence)):
            end += 1
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marked = NOT_RUN.match(before)
        found.append(Block(page, i + 1, lang, "\n".join(lines[i + 1:end]) + "\n",
                           marked.group(1) if marked else None))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    """The blocks of every page."""
    return [b for page in PAGES for b in blocks(page)]


def logical_lines(text: str) -> list[str]:
    """Lines with ``\\`` continuations joined."""
    return text.replace("\\\n", " ").splitlines()


def private_imports(source: str) -> list[str]:
    """What ``source`` (Python) imports from streamflow's implementation modules or names:
    ``streamflow._x``, ``streamflow.a._b``, or ``from streamflow.a import _c``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            names: list[str] = []
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
            names = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] != "streamflow":
                continue
            if any(p.startswith("_") and not p.endswith("__") for p in parts[1:]):
                found.append(module)
            found.extend(f"{module}.{n}" for n in names
                         if n.startswith("_") and not (n.startswith("__") and n.endswith("__")))
    return found
