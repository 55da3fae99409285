"""What the typed wire models of every dialect share.

:class:`WireModel` keeps unknown fields (a newer API version may add some), and
:func:`type_discriminator` routes a union on the payload's ``type`` with a typed
``"unknown"`` fallback, so a well-formed event of a new type never fails to parse.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Discriminator


class WireModel(BaseModel):
    """Base of the wire models: extra fields are kept, not rejected."""

    model_config = ConfigDict(extra="allow")


def type_discriminator(known: tuple[str, ...], suffixes: dict[str, str] | None = None) -> Any:
    """A pydantic ``Discriminator`` on ``type``: a known type is its own tag, a type
    ending in one of ``suffixes`` gets that suffix's tag, anything else ``"unknown"``."""

    def pick(value: Any) -> str:
        kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        if kind in known:
            return str(kind)
        if suffixes and isinstance(kind, str):
            for suffix, tag in suffixes.items():
                if kind.endswith(suffix):
                    return tag
        return "unknown"

    return Discriminator(pick)


def sse_json(obj: Any, event: str | None = None) -> bytes:
    """One SSE event whose data is ``obj`` as compact JSON (for the dialects' error writers)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()


def json_line(obj: Any) -> bytes:
    """One JSON line."""
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def frame_data(frame: Any) -> Any:
    """The JSON payload of an SSE/NDJSON frame, or ``None`` when it holds none."""
    data = getattr(frame, "data", None)
    if not isinstance(data, str) or not data.lstrip().startswith("{"):
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def text_of(value: Any) -> str | None:
    """``value`` when it is a non-empty string."""
    return value if isinstance(value, str) and value else None
