"""The bundled demo: recordings of a two-turn tool-using conversation, its tool, its server.

``recordings/`` holds raw response bodies authored for the demo, one per dialect and
turn (``anthropic-turn1.sse`` ...): turn 1 thinks (with a signature), says a
sentence and calls ``get_weather``; turn 2, after the tool result, answers. The
bodies are exactly what the provider would send, so every layer (HTTP, framing,
dialect, sinks) runs for real when the demo replays them.

Every API that takes a recording file takes these names too, exactly as the
commands do (:func:`resolve_recording`, the one place that decides): a file of that
name in the current folder wins, else the bundled body is read.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["DEMO_DIALECTS", "DEMO_PROMPT", "recording", "recording_names", "resolve_recording"]

DEMO_PROMPT = "What's the weather in Lisbon right now? Do I need a jacket this evening?"
DEMO_DIALECTS: tuple[str, ...] = ("anthropic", "openai-chat")


def recording_names() -> list[str]:
    """File names of the bundled recordings."""
    folder = resources.files(__name__) / "recordings"
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".sse"))


def recording(dialect: str, turn: int) -> bytes:
    """The bundled body of ``turn`` (1 or 2) for ``dialect``."""
    if dialect not in DEMO_DIALECTS or turn not in (1, 2):
        raise ValueError(f"no bundled recording for {dialect!r} turn {turn}")
    return (resources.files(__name__) / "recordings" / f"{dialect}-turn{turn}.sse").read_bytes()


def resolve_recording(path: str | os.PathLike[str]) -> Path:
    """``path``, or the bundled recording it names.

    A file at ``path`` wins; else, when ``path`` is exactly the name of a bundled
    recording (``anthropic-turn1.sse``: :func:`recording_names`), that file of the
    package; else ``Path(path)`` unchanged, so opening it raises the usual
    ``FileNotFoundError``. The commands (``inspect``, ``replay``, ``convert``),
    :func:`streamflow.sources.from_file`, :class:`streamflow.sources.ReplaySource` and
    :func:`streamflow.sources.replay.load_timeline` all resolve their file through it.
    """
    given = Path(path)
    if not given.is_file() and os.fspath(path) in recording_names():
        return Path(str(resources.files(__name__) / "recordings" / os.fspath(path)))
    return given
