"""The checked readers of wire input: the one place a dialect (or a request side) checks
the shape of a JSON value before it uses it.

Every reader returns the value when it has the expected shape and raises
:class:`~streamflow.core.errors.ProtocolError` naming the field otherwise -- never a bare
``TypeError``/``KeyError``/``binascii.Error``. Hot loops check inline
(``type(v) is str``) and call a reader only on the rare path, or raise
:func:`wrong` themselves, so the message is the same everywhere:
``"<what> must be <shape>, not <the value>"`` (a container is named by its kind, a
scalar quoted, at most 60 characters: ``tool_choice must be an object, not 'bogus'``).

=================  =======================================================
reader             accepts
=================  =======================================================
``expect_str``     a string (``None`` reads as ``""``)
``expect_obj``     a JSON object; ``opt_obj``: also ``None`` (read as ``{}``)
``expect_list``    a list; ``opt_list``: also ``None`` (read as ``[]``)
``obj_list``       a list of objects (``None`` is ``[]``)
``expect_index``   an integer (not a bool); ``opt_index``: also ``None``
``token_count``    a non-negative integer count, or absent/``None``
``hashable``       a scalar usable as a key (str, int, float, bool, ``None``)
``b64_field``      base64 text (``urlsafe``: either alphabet) as bytes
=================  =======================================================

The fields of an error the provider reports are read leniently instead
(``error_text``, ``error_code``): a mistyped ``type`` must not hide the error.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from typing import Any

from ...core.errors import ProtocolError

_SCALARS = (str, int, float, bool)


def shown(value: Any) -> str:
    """``value`` as an error quotes it (its JSON kind for containers, at most 60 characters)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def wrong(what: str, shape: str, value: Any) -> ProtocolError:
    """The error for a value of the wrong shape (``raise wrong("delta", "a JSON object", v)``)."""
    return ProtocolError(f"{what} must be {shape}, not {shown(value)}")


def expect_str(value: Any, what: str) -> str:
    """``value`` if it is a string (``None`` reads as ``""``)."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise wrong(what, "a string", value)


def expect_obj(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object."""
    if type(value) is not dict:
        raise wrong(what, "a JSON object", value)
    return value


def opt_obj(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, ``{}`` for ``None``."""
    if value is None:
        return {}
    if type(value) is not dict:
        raise wrong(what, "a JSON object", value)
    return value


def expect_list(value: Any, what: str) -> list[Any]:
    """``value`` if it is a list."""
    if type(value) is not list:
        raise wrong(what, "a list", value)
    return value


def opt_list(value: Any, what: str) -> list[Any]:
    """``value`` if it is a list, ``[]`` for ``None``."""
    if value is None:
        return []
    if type(value) is not list:
        raise wrong(what, "a list", value)
    return value


def obj_list(value: Any, what: str) -> list[dict[str, Any]]:
    """``value`` as a list of JSON objects (``None`` is an empty list)."""
    for entry in opt_list(value, what):
        if type(entry) is not dict:
            raise wrong(f"{what} entry", "a JSON object", entry)
    return [] if value is None else value


def expect_index(value: Any, what: str) -> int:
    """``value`` if it is an integer (a bool is not)."""
    if type(value) is not int:
        raise wrong(what, "an integer", value)
    return value


def opt_index(value: Any, what: str) -> int | None:
    """``value`` if it is an integer or ``None``."""
    if value is None or type(value) is int:
        return value
    raise wrong(what, "an integer", value)


def hashable(value: Any, what: str) -> Any:
    """``value`` if it can key a dict (a JSON scalar); a list or object is a ``ProtocolError``."""
    if value is None or isinstance(value, _SCALARS):
        return value
    raise wrong(what, "a string or a number", value)


def error_text(value: Any) -> str | None:
    """A provider error's ``type``/``request_id``: ``value`` if a non-empty string, or None."""
    return value if type(value) is str and value else None


def error_code(value: Any) -> int | str | None:
    """A provider error's ``code``: an integer or a non-empty string, else ``None``."""
    if type(value) is int or (type(value) is str and value):
        return value
    return None


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


def b64_field(value: Any, what: str, urlsafe: bool = False) -> bytes:
    """The bytes of a base64 string field (``None`` reads as empty); ``urlsafe``: the
    ``-_`` alphabet is accepted too."""
    text = expect_str(value, what)
    try:
        if urlsafe and ("-" in text or "_" in text):
            return b64decode(text, altchars=b"-_", validate=True)
        return b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError(f"{what} is not valid base64") from None
