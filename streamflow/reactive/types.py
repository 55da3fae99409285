"""The types of what ``run()``, ``run_sync()``, ``stream()``, ``stream_sync()`` and ``Agent`` take.

``SourceLike`` is every source those functions accept (see
:func:`streamflow.reactive.sources._coerce.as_source`): a streamflow source or any reactivex
``Observable``, a whole body as ``bytes``, a sync or async iterable of ``bytes``
chunks, or an ``httpx.Response`` opened with ``stream=True``. ``SinkLike`` is every
sink they accept: a :class:`~streamflow.reactive.sinks.base.Sink` (any reactivex observer), an
:class:`~streamflow.reactive.sinks.base.AsyncSink`, or a plain callable given each event.
Both are aliases for type checkers; at run time the functions check their arguments
and raise ``TypeError`` naming what is accepted.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import httpx
    from reactivex import Observable

    from .sinks.base import AsyncSink, Sink

__all__ = ["SinkLike", "SourceLike"]

SourceLike: TypeAlias = ("Observable[Any] | bytes | Iterable[bytes] | AsyncIterable[bytes]"
                         " | httpx.Response")
SinkLike: TypeAlias = "Sink | AsyncSink | Callable[[Any], object]"
