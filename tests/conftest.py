"""Shared pytest configuration: the anyio backends every async test runs on."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on both asyncio and trio."""
    return str(request.param)
