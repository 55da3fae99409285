"""The ``streamflow`` command line (see :mod:`streamflow.cli.main` for adding a subcommand)."""

from __future__ import annotations

from .main import COMMANDS, main

__all__ = ["COMMANDS", "main"]
