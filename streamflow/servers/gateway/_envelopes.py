"""Errors as the client's dialect shows them: an HTTP status and its error envelope (sans-IO).

A failure before the first byte of the answer (the upstream's non-2xx status, a
connection that failed, a request the gateway cannot read) is answered with a
status and the client dialect's JSON error body, so the client SDK raises its own
exception class for that status (``anthropic.RateLimitError``,
``openai.BadRequestError``...). The upstream's status is kept; failures that have
none map to 400 (bad request), 502 (upstream unreachable or broken) or 504
(timeout). The envelope itself is the client dialect's (``error_body`` of its
request side in the registry). A failure after the answer started is the
encoder's in-band error event.

What the upstream said is kept, made safe for the client first (:func:`client_words`):
HTML tags stripped, whitespace collapsed, bounded to :data:`MAX_MESSAGE` characters,
and any URL (the upstream's included) replaced by ``<upstream>``; the gateway logs
the full error. A :class:`~streamflow.core.errors.RequestError` (the client's
request broke its dialect or a limit) carries its own 4xx status and is answered in
the gateway's own words.
"""

from __future__ import annotations

import html
import re

from ...core.errors import (
    HTTPStatusError,
    ProtocolError,
    ProviderError,
    RequestError,
    StreamflowError,
    StreamTimeoutError,
)
from ...core.events import JSONDict
from ...wire.dialects import get_request
from ...wire.dialects.request_base import ErrorInfo

MAX_MESSAGE = 1000
"""The longest upstream message passed on to a client, in characters."""

_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.IGNORECASE)


def client_words(text: str) -> str:
    """``text`` as a client may see it: no markup, no URL, bounded (see the module doc)."""
    if "<" in text:
        text = html.unescape(_TAG.sub(" ", text))
    text = " ".join(_URL.sub("<upstream>", text).split())
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


def status_of(error: StreamflowError) -> int:
    """The HTTP status to answer ``error`` with: a ``RequestError``'s own, the upstream's,
    else 504 for a timeout and 502 for the rest."""
    if isinstance(error, HTTPStatusError | RequestError):
        return error.status
    if isinstance(error, StreamTimeoutError):
        return 504
    if isinstance(error, ProviderError) and isinstance(error.code, int) \
            and 400 <= error.code < 600:
        return error.code
    return 502


def _upstream_words(error: HTTPStatusError) -> str:
    """The upstream's own error message (not our prefix, which names the upstream URL)."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error")
        words = inner.get("message") if isinstance(inner, dict) else inner
        words = words or body.get("message")
        if isinstance(words, str) and words:
            return words
    return error.message.split(": ", 1)[-1]


def error_response(dialect: str, error: StreamflowError, *,
                   status: int | None = None) -> tuple[int, JSONDict]:
    """``(status, body)`` of ``error`` in ``dialect``'s error envelope (``status``: forced).
    A ``RequestError`` is told in our own words; anything else came from the upstream
    and is made safe first (:func:`client_words`)."""
    status = status or status_of(error)
    message = error.message
    if isinstance(error, HTTPStatusError):
        message = _upstream_words(error)
    if isinstance(error, ProtocolError):
        message = f"upstream answer could not be read: {message}"
    if not isinstance(error, RequestError):
        message = client_words(message) or f"the upstream failed with status {status}"
    kind = error.type if isinstance(error, ProviderError) and error.type else None
    code = error.code if isinstance(error, ProviderError) else None
    return status, get_request(dialect).error_body(ErrorInfo(status, message, kind, code))
