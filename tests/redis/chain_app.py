"""An app whose answers come from a failover chain and outlive the instance producing them
(started in its own process by tests/redis/test_takeover.py).

``REDIS_URL`` is the Redis every instance shares, ``MODEL_URL`` an OpenAI-compatible
model server, ``STREAMFLOW_HEARTBEAT`` the streams' heartbeat. ``POST /chat/{id}`` starts
an answer (``uni`` SSE, the chat's token in ``x-resume-token``); ``GET /chat/{id}/stream``
resumes it after ``Last-Event-ID``, on any instance.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from streamflow import Failover
from streamflow.app.providers import OpenAIChatProvider
from streamflow.servers.web.resume import ResumableStreams

chain = Failover([OpenAIChatProvider(base_url=os.environ["MODEL_URL"] + "/v1", model="m",
                                     api_key="k")], tries=1)
streams = ResumableStreams(os.environ["REDIS_URL"], chains={"chat": chain},
                           heartbeat=float(os.environ.get("STREAMFLOW_HEARTBEAT", "0.5")))


async def start(request: Request) -> Response:
    return await streams.create(request, request.path_params["id"],
                                chain.source("What's the weather in Paris?"))


async def resume(request: Request) -> Response:
    return await streams.response(request, request.path_params["id"])


app = Starlette(routes=[Route("/chat/{id}", start, methods=["POST"]),
                        Route("/chat/{id}/stream", resume)], lifespan=streams.lifespan)
