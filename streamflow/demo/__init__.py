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

from ..wire.recordings import DEMO_DIALECTS, recording, recording_names, resolve_recording

__all__ = ["DEMO_DIALECTS", "DEMO_PROMPT", "recording", "recording_names", "resolve_recording"]

DEMO_PROMPT = "What's the weather in Lisbon right now? Do I need a jacket this evening?"
