"""The translating gateway: the Anthropic and OpenAI APIs in front of any upstream dialect.

Needs the ``gateway`` extra (starlette, uvicorn). See :mod:`streamflow.gateway.app`.
"""

from __future__ import annotations

from .app import CLIENT_ROUTES, Gateway, create_app
from .upstream import Upstream

__all__ = ["CLIENT_ROUTES", "Gateway", "Upstream", "create_app"]
