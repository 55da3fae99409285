"""``FILE`` arguments: a path, ``-`` for standard input, or a bundled recording by name.

``inspect``, ``convert`` and ``replay`` take the name of a recording shipped with
the package (``anthropic-turn1.sse``, see :func:`streamflow.demo.recording_names`)
wherever they take a file, so every command in the README runs on a fresh install.
A file of that name in the current folder wins.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..demo import recording_names

__all__ = ["bundled_help", "resolve_path"]


def resolve_path(name: str) -> Path | None:
    """``name`` as a file, else the bundled demo recording of that name, else ``None``."""
    path = Path(name)
    if path.is_file():
        return path
    if name in recording_names():
        return Path(str(resources.files("streamflow.demo") / "recordings" / name))
    return None


def bundled_help() -> str:
    """The bundled recordings' names, for a command's help."""
    return ", ".join(recording_names())
