"""Typed errors from HTTP answers and transport failures (sync-free, shared by both clients).

:func:`status_error` reads the error envelopes providers send with a non-2xx status:

* Anthropic: ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``
* OpenAI / OpenRouter: ``{"error": {"message": ..., "type": ..., "code": ...}}``
* Bedrock: ``{"message": ...}`` with the type in the ``x-amzn-errortype`` header
* anything else: the text itself (cut to 500 characters) as the message.

:func:`transport_error` maps httpx exceptions: a read timeout is
``StreamTimeoutError("idle")``, everything else a ``TransportError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from pydantic_core import from_json

from ..errors import HTTPStatusError, StreamflowError, StreamTimeoutError, TransportError

__all__ = ["MAX_ERROR_BODY", "status_error", "transport_error"]

MAX_ERROR_BODY = 64 * 1024


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def status_error(status: int, headers: Mapping[str, str], body: bytes) -> HTTPStatusError:
    """The :class:`HTTPStatusError` for a non-2xx answer, its envelope read (see module doc)."""
    head = {k.lower(): v for k, v in headers.items()}
    text = body.decode("utf-8", "replace")
    try:
        payload: Any = from_json(body) if body.strip() else None
    except ValueError:
        payload = None
    message = type_ = request_id = None
    if isinstance(payload, dict):
        err = payload.get("error")
        if isinstance(err, dict):
            message = _text(err.get("message"))
            type_ = _text(err.get("type")) or _text(err.get("code"))
        else:
            message = _text(err)
        message = message or _text(payload.get("message")) or _text(payload.get("Message"))
        kind = _text(payload.get("type"))
        type_ = type_ or _text(payload.get("__type")) or (kind if kind != "error" else None)
        request_id = _text(payload.get("request_id"))
    amzn = head.get("x-amzn-errortype")
    if amzn and not type_:
        type_ = amzn.split(":", 1)[0]
    request_id = request_id or head.get("request-id") or head.get("x-request-id") \
        or head.get("x-amzn-requestid")
    if message is None:
        message = text.strip()[:500] or _reason(status)
    return HTTPStatusError(f"HTTP {status}: {message}", status=status, headers=head, type=type_,
                           body=payload if payload is not None else text,
                           request_id=request_id)


def _reason(status: int) -> str:
    return httpx.codes.get_reason_phrase(status) or "error"


def transport_error(exc: Exception) -> Exception:
    """A streamflow error for an httpx exception (others are returned unchanged)."""
    if isinstance(exc, StreamflowError):
        return exc
    if isinstance(exc, httpx.ReadTimeout):
        timeout = (exc.request.extensions.get("timeout") or {}).get("read") \
            if _has_request(exc) else None
        out: Exception = StreamTimeoutError("idle", float(timeout or 0))
    elif isinstance(exc, (httpx.TransportError, httpx.StreamError)):
        out = TransportError(f"{type(exc).__name__}: {exc}")
    else:
        return exc
    out.__cause__ = exc
    return out


def _has_request(exc: httpx.RequestError) -> bool:
    try:
        exc.request  # noqa: B018 - raises RuntimeError when unset
    except RuntimeError:
        return False
    return True
