"""The bundled recordings: real-shaped bodies of two demo turns in two dialects, by name
(``anthropic-turn1.sse`` ...), which the commands, the file and replay sources and the
demo take wherever they take a file."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["DEMO_DIALECTS", "recording", "recording_names", "resolve_recording"]

DEMO_DIALECTS: tuple[str, ...] = ("anthropic", "openai-chat")


def recording_names() -> list[str]:
    """File names of the bundled recordings."""
    folder = resources.files(__name__)
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".sse"))


def recording(dialect: str, turn: int) -> bytes:
    """The bundled body of ``turn`` (1 or 2) for ``dialect``."""
    if dialect not in DEMO_DIALECTS or turn not in (1, 2):
        raise ValueError(f"no bundled recording for {dialect!r} turn {turn}")
    return (resources.files(__name__) / f"{dialect}-turn{turn}.sse").read_bytes()


def resolve_recording(path: str | os.PathLike[str]) -> Path:
    """``path``, or the bundled recording it names.

    A file at ``path`` wins; else, when ``path`` is exactly the name of a bundled
    recording (``anthropic-turn1.sse``: :func:`recording_names`), that file of the
    package; else ``Path(path)`` unchanged, so opening it raises the usual
    ``FileNotFoundError``. The commands (``inspect``, ``replay``, ``convert``),
    :func:`streamflow.reactive.sources.from_file`,
    :class:`streamflow.reactive.sources.ReplaySource` and
    :func:`streamflow.reactive.sources.replay.load_timeline` all resolve their file through it.
    """
    given = Path(path)
    if not given.is_file() and os.fspath(path) in recording_names():
        return Path(str(resources.files(__name__) / os.fspath(path)))
    return given
