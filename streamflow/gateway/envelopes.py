"""Errors as the client's dialect shows them: an HTTP status and its error envelope (sans-IO).

A failure before the first byte of the answer (the upstream's non-2xx status, a
connection that failed, a request the gateway cannot read) is answered with a
status and the client dialect's JSON error body, so the client SDK raises its own
exception class for that status (``anthropic.RateLimitError``,
``openai.BadRequestError``...). The upstream's status is kept; failures that have
none map to 400 (bad request), 502 (upstream unreachable or broken) or 504
(timeout). The envelope itself is the client dialect's (``error_body`` of its
request format in the registry). A failure after the answer started is the
encoder's in-band error event.
"""

from __future__ import annotations

from ..dialects import get_request
from ..dialects.request_base import ErrorInfo
from ..errors import (
    HTTPStatusError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    StreamTimeoutError,
)
from ..events import JSONDict

__all__ = ["error_response", "status_of"]

def status_of(error: StreamflowError, *, client_side: bool = False) -> int:
    """The HTTP status to answer ``error`` with (``client_side``: the client's request was bad)."""
    if isinstance(error, HTTPStatusError):
        return error.status
    if client_side:
        return 400
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
                   client_side: bool = False) -> tuple[int, JSONDict]:
    """``(status, body)`` of ``error`` in ``dialect``'s error envelope."""
    status = status_of(error, client_side=client_side)
    message = error.message
    if isinstance(error, HTTPStatusError):
        message = _upstream_words(error)
    if isinstance(error, ProtocolError) and not client_side:
        message = f"upstream answer could not be read: {message}"
    kind = error.type if isinstance(error, ProviderError) and error.type else None
    code = error.code if isinstance(error, ProviderError) else None
    return status, get_request(dialect).error_body(ErrorInfo(status, message, kind, code))
