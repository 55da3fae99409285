"""The translating gateway: the Anthropic and OpenAI APIs in front of any upstream dialect.

Needs the ``gateway`` extra (starlette, uvicorn). See :mod:`streamflow.gateway.app`.
"""

from __future__ import annotations

from .app import Gateway, client_routes, create_app
from .upstream import Upstream

__all__ = ["Gateway", "Upstream", "client_routes", "create_app"]
