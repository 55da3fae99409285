"""The sans-IO encoder base: UniEvents in, one wire format's body bytes out.

An encoder is the mirror of a :class:`~streamflow.dialects.base.Decoder`. It is fed
the events of one stream in order and returns the bytes to write for each, as they
arrive (nothing is buffered past what the target format needs)::

    enc = get_encoder("anthropic")()
    for event in events:
        out.write(enc.feed(event))   # the stop event writes the dialect's terminator
    # or, when the stream failed:
    out.write(enc.fail(error))       # the dialect's in-band error event

``feed`` returns ``b""`` when an event writes nothing yet. After ``stop`` or ``fail``
the encoder is finished: feeding more raises ``RuntimeError`` (a caller bug).
Options that choose between equally valid renderings ("flavours", such as the
reasoning field of openai-chat) are keyword arguments of the constructor.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..errors import StreamflowError
from ..events import UniEvent

__all__ = ["Encoder"]


class Encoder:
    """Base of every encoder; subclasses implement :meth:`encode_event` and :meth:`encode_error`.

    ``name`` is the registry name, ``media_type`` the HTTP content type of the body.
    """

    name: ClassVar[str] = ""
    media_type: ClassVar[str] = "text/event-stream"

    def __init__(self, **flavour: Any) -> None:
        if flavour:
            raise TypeError(f"{type(self).__name__} takes no option {sorted(flavour)!r}")
        self.finished = False

    def feed(self, event: UniEvent) -> bytes:
        """The bytes for ``event``; the ``stop`` event also writes the terminator."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder fed after its stream ended")
        if event.event_type == "stop":
            self.finished = True
        return self.encode_event(event)

    def fail(self, error: StreamflowError) -> bytes:
        """The bytes that end the stream with ``error`` (the dialect's in-band error)."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder failed after its stream ended")
        self.finished = True
        return self.encode_error(error)

    def encode_event(self, event: UniEvent) -> bytes:
        """Subclass hook: the bytes of one event (``stop`` included)."""
        raise NotImplementedError

    def encode_error(self, error: StreamflowError) -> bytes:
        """Subclass hook: the bytes of the terminal error."""
        raise NotImplementedError
