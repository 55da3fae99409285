"""Small checked readers for values that enter UniEvent items and usage (hostile JSON safe).

Each raises :class:`~streamflow.errors.ProtocolError` for a value of the wrong shape,
never a bare ``TypeError``/``binascii.Error``.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from typing import Any

from ..errors import ProtocolError
from .base import expect_str

__all__ = ["b64_field", "token_count"]


def b64_field(value: Any, what: str) -> bytes:
    """The bytes of a base64 string field (``None`` reads as empty)."""
    try:
        return b64decode(expect_str(value, what), validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError(f"{what} is not valid base64") from None


def token_count(raw: dict[str, Any], key: str) -> int | None:
    """``raw[key]`` when it is an integer count, ``None`` when absent or null."""
    value = raw.get(key)
    if value is None:
        return None
    if type(value) is not int:
        raise ProtocolError(f"usage {key} must be an integer, got {value!r}")
    return value
