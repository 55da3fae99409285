"""Shared pytest configuration: the anyio backends every async test runs on, the
hypothesis profiles, and the ``slow`` tests the default run leaves out.

* ``HYPOTHESIS_PROFILE`` picks the property tests' budget: ``dev`` (the default, a
  quarter of each test's examples, at least 10) or ``ci`` (twice each test's examples;
  ``.ci/run`` sets it). A test's examples are its own ``@settings(max_examples=...)``
  or hypothesis' 100.
* ``@pytest.mark.slow`` marks the benches, load tests, mypy runs and other tests of a
  minute: a run over folders (``python -m pytest``) deselects them; ``--run-slow``,
  a ``-m`` expression (``-m slow``), or naming the test's file runs them.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

PROFILES = {"dev": 0.25, "ci": 2.0}
"""Each profile's factor on a test's ``max_examples`` (hypothesis' default is 100)."""
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
if PROFILE not in PROFILES:
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE={PROFILE!r}: one of {', '.join(PROFILES)}")
settings.register_profile("dev")
settings.register_profile("ci", print_blob=True)
settings.load_profile(PROFILE)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow (benches, load tests, mypy runs)")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts): one process when the run names one file (no
    workers to start for it), else pytest-xdist's count of CPUs."""
    files = {arg.split("::")[0] for arg in config.args}
    if len(files) == 1 and Path(next(iter(files))).is_file():
        return 0
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a test of a minute or more (bench, load, mypy run); left out of a "
        "run over folders unless --run-slow")


def _runs_slow(config: pytest.Config) -> bool:
    return bool(config.getoption("--run-slow") or config.getoption("markexpr"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _scale_examples(items)
    if _runs_slow(config):
        return
    named = {Path(arg.split("::")[0]).resolve() for arg in config.args}
    slow = [item for item in items
            if item.get_closest_marker("slow") is not None and item.path not in named]
    if slow:
        config.hook.pytest_deselected(items=slow)
        left = set(map(id, slow))
        items[:] = [item for item in items if id(item) not in left]


def _scale_examples(items: list[pytest.Item]) -> None:
    """Scale every property test's ``max_examples`` (its own or the profile's) by the
    profile's factor; hypothesis keeps a test's settings on the function."""
    factor = PROFILES[PROFILE]
    done: set[int] = set()
    for item in items:
        test: Any = getattr(item, "obj", None)
        test = getattr(test, "__func__", test)  # a method's function
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or id(test) in done:
            continue
        done.add(id(test))
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=max(10, round(own.max_examples * factor)))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    over_folders = any(Path(arg.split("::")[0]).is_dir() for arg in config.args)
    if over_folders and not _runs_slow(config) and not hasattr(config, "workerinput"):
        terminalreporter.write_line(
            "the tests marked slow (benches, load tests, mypy runs) were left out: "
            "python -m pytest --run-slow runs everything")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on both asyncio and trio."""
    return str(request.param)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection left (every module, every test item): the collections
    after each async test then look only at what tests made since."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_cycles(request: pytest.FixtureRequest) -> Iterator[None]:
    """Free the reference cycles a failing async stream leaves, right after its test.

    Left to the collector, they can be freed while pytest compiles a later module,
    where CPython 3.11 then fails with "AST constructor recursion depth mismatch".
    What survives is frozen (``gc.freeze``), so that the next test's collection is as
    cheap as that test: a full collection of the suite's heap takes seconds.
    """
    yield
    if request.node.get_closest_marker("anyio") is not None:
        gc.collect()
        gc.freeze()
