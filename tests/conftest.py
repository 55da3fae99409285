"""Shared pytest configuration: the anyio backends every async test runs on."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on both asyncio and trio."""
    return str(request.param)


@pytest.fixture(autouse=True)
def _collect_cycles(request: pytest.FixtureRequest) -> Iterator[None]:
    """Free the reference cycles a failing async stream leaves, right after its test.

    Left to the collector, they can be freed while pytest compiles a later module,
    where CPython 3.11 then fails with "AST constructor recursion depth mismatch".
    """
    yield
    if request.node.get_closest_marker("anyio") is not None:
        gc.collect()
