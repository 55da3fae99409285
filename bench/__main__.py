"""``python -m bench``: run the benchmark suite (see bench/README.md)."""

from __future__ import annotations

import sys

from .run import main

sys.exit(main())
