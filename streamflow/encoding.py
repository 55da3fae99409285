"""``streamflow.encode``: a UniEvent stream written out again in any registered wire format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .dialects import get_encoder
from .errors import StreamflowError
from .events import UniEvent

__all__ = ["encode"]


def encode(events: Iterable[UniEvent], dialect: str, **flavour: Any) -> Iterator[bytes]:
    """Yield the body bytes of ``events`` in ``dialect`` (a name of ``ENCODERS``), as they arrive.

    ``flavour`` are the encoder's options. When iterating ``events`` raises a
    :class:`StreamflowError`, the dialect's in-band error event is written last and
    the error is raised again, so a caller still sees how the stream ended.
    """
    encoder = get_encoder(dialect)(**flavour)
    try:
        for event in events:
            chunk = encoder.feed(event)
            if chunk:
                yield chunk
    except StreamflowError as error:
        yield encoder.fail(error)
        raise
