"""Sources: cold observables of body chunks, bridged to anyio (see :mod:`.bridge`).

One subscription = one read of the body (for HTTP, one request); share it with
``streamflow.run()``. Async sources pump in the task group of a :func:`scope`.
The httpx-based names load on first use, so operators importing the bridge do
not pay for httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports
from ...core.errors import NoScopeError
from .._scope import Scope, current_scope, scope
from .._source import Source
from .file import framing_for_path, from_file
from .iterables import (
    AsyncIterableSource,
    SyncSource,
    from_async_iterable,
    from_bytes,
    from_iterable,
)
from .redis import RedisSource, from_redis

if TYPE_CHECKING:  # loaded lazily at run time (see __getattr__)
    from ._http_errors import status_error, transport_error
    from .http import AsyncHTTPSource, from_httpx
    from .replay import ReplaySource

__all__ = [
    "AsyncHTTPSource",
    "AsyncIterableSource",
    "NoScopeError",
    "RedisSource",
    "ReplaySource",
    "Scope",
    "Source",
    "SyncSource",
    "current_scope",
    "framing_for_path",
    "from_async_iterable",
    "from_bytes",
    "from_file",
    "from_httpx",
    "from_iterable",
    "from_redis",
    "scope",
    "status_error",
    "transport_error",
]

_LAZY = {  # the httpx-based names load on first use
    "AsyncHTTPSource": ".http",
    "from_httpx": ".http",
    "ReplaySource": ".replay",
    "status_error": "._http_errors",
    "transport_error": "._http_errors",
}


if not TYPE_CHECKING:  # mypy sees the imports above
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)
