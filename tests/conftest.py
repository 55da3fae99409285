"""Shared pytest configuration: the anyio backends every async test runs on."""

from __future__ import annotations

import pytest

from realdata import DATA, REAL, ROOT, framing_for, real_body, real_path

__all__ = ["DATA", "REAL", "ROOT", "framing_for", "real_body", "real_path"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on both asyncio and trio."""
    return str(request.param)
