"""Fault tests: collect the garbage the failing async streams leave, module by module.

Failing async streams leave reference cycles (frames, tracebacks, cancel scopes).
When the collector happens to free them while pytest compiles a module it imports
late (the hypothesis plugin imports hypothesis at the terminal summary when no test
did), CPython 3.11 can fail with "SystemError: AST constructor recursion depth
mismatch". Collecting at the end of each test module keeps that from happening.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _collect_cycles() -> Iterator[None]:
    yield
    gc.collect()
