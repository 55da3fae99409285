"""What the dialect-aware faults need to know of each dialect.

For each dialect a :class:`Profile` says which framed event ends the stream (so
``DropTerminator`` can remove it) and how the provider writes an in-band error after
a ``200`` (so ``InsertError`` can add one). Both are facts of the dialect itself
(``Decoder.is_terminator``, ``Decoder.error_frame`` in its folder), read from here;
``PROFILES["my-dialect"] = Profile(...)`` overrides them. A dialect without them
falls back to "the last event is the terminator" and no in-band error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.errors import StreamflowError
from ..wire.dialects.base import Decoder
from ..wire.framing import make_framer

__all__ = ["PROFILES", "ErrorSpec", "Profile", "profile_for"]


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """An in-band error to inject: HTTP-like ``code``, provider ``type``, ``message``."""

    code: int = 503
    type: str | None = None  # None: the dialect's usual "overloaded" type
    message: str = "Overloaded (injected fault)"

    def kind(self, default: str) -> str:
        """``type``, or the dialect's own name for an overloaded server."""
        return self.type or default


@dataclass(frozen=True, slots=True)
class Profile:
    """``framing``; ``is_terminator(event_bytes)``; ``error_event(spec)`` (``None``: none)."""

    framing: str
    is_terminator: Callable[[bytes], bool] | None = None
    error_event: Callable[[ErrorSpec], bytes] | None = None


def _terminator_test(cls: Any) -> Callable[[bytes], bool]:
    def test(event: bytes) -> bool:
        framer = make_framer(cls.framing)
        try:
            frames = [*framer.feed(event), *framer.close()]
        except StreamflowError:
            return False
        return any(cls.is_terminator(frame) for frame in frames)
    return test


def _error_writer(cls: Any) -> Callable[[ErrorSpec], bytes] | None:
    if cls.error_frame(503, None, "probe") is None:
        return None
    return lambda spec: cls.error_frame(spec.code, spec.type, spec.message)


#: Profiles registered by hand (a dialect outside the registry, or an override);
#: every registered dialect has one built from its own facts (``Decoder.is_terminator``,
#: ``Decoder.error_frame``).
PROFILES: dict[str, Profile] = {}


def profile_for(dialect: str) -> Profile:
    """The registered profile, or a fallback from the dialect decoder's framing."""
    found = PROFILES.get(dialect)
    if found is not None:
        return found
    from ..wire.dialects import get_dialect  # ValueError for an unknown dialect name

    cls = get_dialect(dialect)
    terminates = cls.is_terminator is not Decoder.is_terminator
    return Profile(cls.framing, _terminator_test(cls) if terminates else None,
                   _error_writer(cls))
