"""A source over a raw recording file: the body bytes exactly as they came off the wire.

Marble::

    from_file("turn.sse", chunk_size=65536)   --64 KiB--64 KiB--rest--|

The framing hint follows the extension (``.jsonl``/``.ndjson`` -> ``"ndjson"``,
``.bin`` -> ``"eventstream"`` when that framer is registered, else sniffed), and
``run()`` passes it to the pipeline. ``path`` may also name a recording bundled with
the package (``from_file("anthropic-turn1.sse")``), as the commands take it: a file of
that name in the current folder wins (:func:`streamflow.demo.resolve_recording`).
Timed replays (realistic inter-event delays) are :mod:`streamflow.reactive.sources.replay`'s
business.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...core.limits import Limits
from ...wire.framing import FRAMERS
from ...wire.recordings import resolve_recording
from .iterables import SyncSource

__all__ = ["framing_for_path", "from_file"]

_EXTENSIONS = {".jsonl": "ndjson", ".ndjson": "ndjson", ".sse": "sse", ".bin": "eventstream"}


def framing_for_path(path: str | Path) -> str | None:
    """The framing a recording's extension implies (``None``: sniff the bytes)."""
    framing = _EXTENSIONS.get(Path(path).suffix.lower())
    return framing if framing in FRAMERS else None


def from_file(path: str | Path, *, chunk_size: int = 64 * 1024,
              limits: Limits | None = None) -> SyncSource:
    """Read ``path`` in ``chunk_size`` pieces, once per subscription (the file is closed after).

    ``path`` may be the name of a bundled recording (see the module doc).
    """
    target = resolve_recording(path)

    @contextmanager
    def opener() -> Iterator[Iterator[bytes]]:
        with target.open("rb") as handle:
            yield iter(lambda: handle.read(chunk_size), b"")

    return SyncSource(opener, limits=limits, framing=framing_for_path(target))
