"""The recording format now lives in :mod:`streamflow.recording` (below sinks and sources);
this module keeps the old import path working."""

from __future__ import annotations

from ..recording import *  # noqa: F403
from ..recording import __all__  # noqa: F401
