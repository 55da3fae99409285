"""Models by name as a source: ``from_model("anthropic:claude-sonnet-4-5", "Hi")``.

The string is the one :class:`~streamflow.Agent` takes (:func:`~streamflow.app.providers.
provider_for`: the key and the base URL from the official SDKs' variables). The source
sends one streaming request per subscription through an HTTP client of its own, opened
when the stream starts and closed when it ends, so ``run``, ``stream`` and every operator
take a model as they take a file::

    message = await streamflow.run(from_model("openai:gpt-4.1-mini", "Hi"), RenderSink())
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import httpx
from reactivex import Observable

from ..core.limits import Limits
from ..core.requests import Turn
from ..reactive.sources.http import AsyncHTTPSource
from .failover import Failover, own_client
from .providers import provider_for
from .tools import Tool

__all__ = ["from_model"]

class _OwnClientSource(AsyncHTTPSource):
    """An :class:`AsyncHTTPSource` that opens its client per subscription and closes it."""

    def __init__(self, request: httpx.Request, *, limits: Limits | None = None) -> None:
        super().__init__(cast(httpx.AsyncClient, None), request, limits=limits)  # per open

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        async with own_client() as client:
            self.client = client
            async with super()._open() as chunks:
                yield chunks


def from_model(spec: str, prompt: str | Sequence[Turn], *, tools: Iterable[Tool] = (),
               limits: Limits | None = None, fallbacks: Sequence[Any] = (),
               **options: Any) -> Observable[Any]:
    """A source of the model ``spec`` names answering ``prompt`` (a user text, or a
    conversation of neutral :class:`~streamflow.core.requests.Turn` s), offering ``tools``;
    ``options`` are the provider's fields (``max_tokens``, ``system``, ``api_key``,
    ``base_url``...), ``limits`` the read's. ``fallbacks`` (model strings, providers or
    endpoints) make it a :class:`~streamflow.app.failover.Failover` chain's source: the
    answer goes on at them when the model fails, mid-answer included. ``ValueError`` for
    a bad model string."""
    provider = provider_for(spec, **options)
    conversation = [Turn.user(prompt)] if isinstance(prompt, str) else list(prompt)
    if fallbacks:
        chain = Failover([provider, *fallbacks], limits=limits)
        return chain.source(conversation, tools=tools)
    built = provider.request(conversation, tools)
    request = httpx.Request(built.method, built.url, headers=built.headers, content=built.body)
    return _OwnClientSource(request, limits=limits)
