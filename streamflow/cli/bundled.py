"""``FILE`` arguments: a path, ``-`` for standard input, or a bundled recording by name.

``inspect``, ``convert`` and ``replay`` take the name of a recording shipped with
the package (``anthropic-turn1.sse``, see :func:`streamflow.demo.recording_names`)
wherever they take a file, so every command of the docs runs on a fresh install (the
sources take them too: :func:`streamflow.demo.resolve_recording`).
A file of that name in the current folder wins.
"""

from __future__ import annotations

from pathlib import Path

from ..demo import recording_names, resolve_recording

__all__ = ["bundled_help", "resolve_path", "why_unreadable"]


def resolve_path(name: str) -> Path | None:
    """``name`` as a file, else the bundled demo recording of that name, else ``None``.

    The resolution is :func:`streamflow.demo.resolve_recording`'s, the one every
    file-taking source shares.
    """
    path = resolve_recording(name)
    return path if path.is_file() else None


def why_unreadable(name: str) -> str:
    """Why :func:`resolve_path` gave ``None`` for ``name``, in the words of an error."""
    path = Path(name)
    if path.is_dir():
        return "it is a directory"
    if path.exists():
        return "not a regular file (to read a pipe, give - and redirect it to standard input)"
    return "no such file or bundled recording"


def bundled_help() -> str:
    """The bundled recordings' names, for a command's help."""
    return ", ".join(recording_names())
