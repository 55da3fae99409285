"""Typed errors from HTTP answers and transport failures (sync-free, shared by both clients).

:func:`status_error` reads the error envelopes providers send with a non-2xx status
(each dialect knows its own: ``Decoder.http_error`` in its folder):

* Anthropic: ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``
* OpenAI / OpenRouter: ``{"error": {"message": ..., "type": ..., "code": ...}}``
* Bedrock: ``{"message": ...}`` with the type in the ``x-amzn-errortype`` header
* anything else: the text itself (cut to 500 characters) as the message.

:func:`transport_error` maps httpx exceptions: a read timeout is
``StreamTimeoutError("idle")``, a connect or pool timeout
``StreamTimeoutError("connect")``, everything else a ``TransportError``; given
``where`` (``"POST https://..."``) the message names the request.
:func:`headers_timeout` and :func:`error_body_timeout` are the timeouts of the two
waits before a body: no response headers, and a non-2xx error body that never ends
(it keeps the status and the bytes that did arrive).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from pydantic_core import from_json

from ...core.errors import HTTPStatusError, StreamflowError, StreamTimeoutError, TransportError

MAX_ERROR_BODY = 64 * 1024


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def status_error(status: int, headers: Mapping[str, str], body: bytes,
                 dialect: str | None = None, *, where: str | None = None) -> HTTPStatusError:
    """The :class:`HTTPStatusError` for a non-2xx answer, its envelope read (see module doc).

    Each dialect knows its provider's envelope (``Decoder.http_error``): ``dialect``'s
    is asked first, then every registered dialect's, in registry order. ``where``
    (``"POST https://host/v1/messages"``) is named in the message.
    """
    head = {k.lower(): v for k, v in headers.items()}
    text = body.decode("utf-8", "replace")
    try:
        payload: Any = from_json(body) if body.strip() else None
    except ValueError:
        payload = None
    message, type_, request_id = _envelope(payload, head, dialect)
    if isinstance(payload, dict):  # a bare {"message", "type"}
        message = message or _text(payload.get("message"))
        kind = _text(payload.get("type"))
        type_ = type_ or (kind if kind != "error" else None)
    request_id = request_id or head.get("request-id") or head.get("x-request-id") \
        or head.get("x-amzn-requestid")
    if message is None:
        message = text.strip()[:500] or _reason(status)
    origin = f" from {where}" if where else ""
    return HTTPStatusError(f"HTTP {status}{origin}: {message}", status=status, headers=head,
                           type=type_, body=payload if payload is not None else text,
                           request_id=request_id)


def _envelope(payload: Any, headers: Mapping[str, str],
              dialect: str | None) -> tuple[str | None, str | None, str | None]:
    from ...wire.dialects import DIALECTS, get_dialect

    names = ([dialect] if dialect in DIALECTS else []) + list(DIALECTS)
    found: list[str | None] = [None, None, None]  # the first reader to know each field wins
    for name in names:
        try:
            read = get_dialect(name).http_error  # type: ignore[arg-type]
        except ImportError:
            continue
        for i, value in enumerate(read(payload, headers)):
            found[i] = found[i] or value
        if found[0] is not None and found[1] is not None:
            break
    return found[0], found[1], found[2]


def _reason(status: int) -> str:
    return httpx.codes.get_reason_phrase(status) or "error"


def transport_error(exc: Exception, where: str | None = None) -> Exception:
    """A streamflow error for an httpx exception (others are returned unchanged)."""
    if isinstance(exc, StreamflowError):
        return exc
    suffix = f" ({where})" if where else ""
    out: Exception
    if isinstance(exc, httpx.ReadTimeout):
        out = _timeout("idle", _timeout_of(exc, "read"), suffix)
    elif isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)):
        key = "connect" if isinstance(exc, httpx.ConnectTimeout) else "pool"
        out = _timeout("connect", _timeout_of(exc, key), f": no connection{suffix}")
    elif isinstance(exc, (httpx.TransportError, httpx.StreamError)):
        out = TransportError(f"{type(exc).__name__}: {exc or 'connection failed'}{suffix}")
    else:
        return exc
    out.__cause__ = exc
    return out


def headers_timeout(request: httpx.Request, seconds: float) -> StreamTimeoutError:
    """No response headers within ``seconds`` (the idle limit) after sending ``request``."""
    return _timeout("idle", seconds,
                    f": no response headers from {request.method} {request.url}")


def error_body_timeout(response: httpx.Response, received: bytes,
                       seconds: float) -> StreamTimeoutError:
    """A non-2xx answer whose error body did not end within ``seconds``.

    The message names the status and the request and shows what arrived; the
    :class:`HTTPStatusError` read from those bytes is the error's ``__cause__``.
    """
    request = response.request
    where = f"{request.method} {request.url}"
    shown = received[:200].decode("utf-8", "replace")
    out = _timeout("idle", seconds,
                   f": HTTP {response.status_code} from {where}, its error body unfinished "
                   f"after {len(received)} bytes: {shown!r}")
    out.__cause__ = status_error(response.status_code, response.headers, received, where=where)
    return out


def _timeout(kind: str, seconds: float, detail: str) -> StreamTimeoutError:
    out = StreamTimeoutError(kind, seconds)
    out.message = out.message + detail
    out.args = (out.message,)
    return out


def _timeout_of(exc: httpx.TimeoutException, key: str) -> float:
    if not _has_request(exc):
        return 0.0
    return float((exc.request.extensions.get("timeout") or {}).get(key) or 0)


def _has_request(exc: httpx.RequestError) -> bool:
    try:
        exc.request  # noqa: B018 - raises RuntimeError when unset
    except RuntimeError:
        return False
    return True
