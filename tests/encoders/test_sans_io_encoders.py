"""Encoders are core: importing every one of them loads no IO library."""

from __future__ import annotations

import subprocess
import sys

from corpus import TARGETS


def test_importing_every_encoder_loads_no_io_library() -> None:
    code = ("import sys; import streamflow.wire.dialects as d; import streamflow.wire.encoding;"
            f"[d.get_encoder(n) for n in {TARGETS!r}];"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('reactivex', 'anyio', 'httpx', 'rich', 'trio', 'asyncio')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
