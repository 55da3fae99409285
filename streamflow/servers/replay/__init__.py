"""A loopback HTTP/1.1 replay server (anyio + h11) for tests, demos and fault injection.

See :mod:`streamflow.servers.replay.replay`; routes are plain data (:class:`Route`), or
functions of the request that return one (:data:`Responder`).
"""

from __future__ import annotations

from .replay import ReplayServer, Responder
from .routes import ODD_SIZES, Hit, Route, split_odd

__all__ = ["ODD_SIZES", "Hit", "ReplayServer", "Responder", "Route", "split_odd"]
