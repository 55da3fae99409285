"""Test helpers for real recordings from ../shared/fixtures/real (skipped when absent).

Import as ``from realdata import real_body`` (``tests/`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REAL = Path(os.environ.get("STREAMFLOW_REAL_RECORDINGS")
            or ROOT.parent / "shared" / "fixtures" / "real")
"""The real recordings: ../shared/fixtures/real beside the checkout, or the folder
``STREAMFLOW_REAL_RECORDINGS`` names (a worktree elsewhere)."""
DATA = Path(__file__).resolve().parent / "data"


def real_path(relative: str) -> Path:
    """Path of a real recording under ../shared/fixtures/real; skips the test when absent."""
    path = REAL / relative
    if not path.exists():
        pytest.skip(f"real recording {relative} not present: {REAL} is only in the team's "
                    "checkout, not in a user's clone (STREAMFLOW_REAL_RECORDINGS names it)")
    return path


def real_body(relative: str) -> bytes:
    """A real recording's bytes, with the final blank line restored for ``.sse`` files.

    Some recordings were stored without the blank line that ended the last event on
    the wire (see ../shared/README.md); by the SSE rules that event would be
    discarded, so it is put back here, where we know it was on the wire.
    """
    body = real_path(relative).read_bytes()
    if relative.endswith(".sse") and not body.endswith((b"\n\n", b"\r\n\r\n")):
        body += b"\r\n\r\n" if body.endswith(b"\r\n") else b"\n\n"
    return body


def framing_for(relative: str) -> str | None:
    """``ndjson`` for ``.jsonl`` recordings (one SSE data payload per line), else None."""
    return "ndjson" if relative.endswith(".jsonl") else None


_FAULT_BODIES: Any = None


def fault_bodies() -> Any:
    """``tests/faults/fault_bodies.py`` (one well-formed body per dialect), loaded once."""
    global _FAULT_BODIES
    if _FAULT_BODIES is None:
        import importlib.util

        path = Path(__file__).resolve().parent / "faults" / "fault_bodies.py"
        spec = importlib.util.spec_from_file_location("_shared_fault_bodies", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _FAULT_BODIES = module
    return _FAULT_BODIES
