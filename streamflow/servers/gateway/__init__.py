"""The translating gateway: the Anthropic and OpenAI APIs in front of any upstream dialect.

:func:`create_app` builds the ASGI app (starlette): ``POST /v1/messages``,
``/v1/chat/completions`` and ``/v1/responses`` (one route per registered request
format with a client path, :func:`client_routes`), each translated to the
:class:`Upstream`'s dialect and its stream re-encoded for the client as it arrives;
:class:`Gateway` holds the handlers. What a client may send is bounded by
:mod:`streamflow.servers.gateway.limits`, what the server ``streamflow gateway`` runs by
:mod:`streamflow.servers.gateway.server`. Needs the ``gateway`` extra (starlette, uvicorn,
httptools). docs/gateway.md and docs/SECURITY.md have the rest.
"""

from __future__ import annotations

from ..._extras import require

require("streamflow.servers.gateway", "gateway", "starlette", "uvicorn", "httptools")

from ._app import Gateway, client_routes, create_app
from ._upstream import Upstream

__all__ = ["Gateway", "Upstream", "client_routes", "create_app"]
