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


def token_count(raw: Any, key: str) -> int | None:
    """``raw[key]`` when it is a non-negative integer count, ``None`` when absent or null.

    The one rule of every dialect: a negative, fractional, ``NaN``/``Infinity``,
    ``1e999`` or string count is a ``ProtocolError``.
    """
    value = raw.get(key) if type(raw) is dict else None
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise ProtocolError(f"usage {key} must be a non-negative integer, got {value!r:.40}")
    return value
