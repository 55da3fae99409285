"""``streamflow.encode``: a UniEvent stream written out again to any registered target."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..core.events import UniEvent
from .dialects import get_encoder
from .dialects.encoder import BodyWriter

__all__ = ["encode"]


def encode(events: Iterable[UniEvent], target: str, **flavour: Any) -> Iterator[bytes]:
    """Yield the body bytes of ``events`` in ``target`` (a name of ``ENCODERS``: a dialect
    or a UI target), as they arrive.

    ``flavour`` are the encoder's options. The body ends as every streamflow body
    does (:class:`~streamflow.wire.dialects.encoder.BodyWriter`): when iterating ``events``
    raises a :class:`~streamflow.core.errors.StreamflowError`, the target's in-band error
    event is written last and the error raised again; events that end without a
    ``stop`` get the in-band error of an
    :class:`~streamflow.core.errors.IncompleteStreamError`, which is then raised.
    """
    return BodyWriter(get_encoder(target)(**flavour)).body(events)
