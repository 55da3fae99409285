"""Errors as the client's dialect shows them: an HTTP status and its error envelope (sans-IO).

A failure before the first byte of the answer (the upstream's non-2xx status, a
connection that failed, a request the gateway cannot read) is answered with a
status and the client dialect's JSON error body, so the client SDK raises its own
exception class for that status (``anthropic.RateLimitError``,
``openai.BadRequestError``...). The upstream's status is kept; failures that have
none map to 400 (bad request), 502 (upstream unreachable or broken) or 504
(timeout). A failure after the answer started is the encoder's in-band error event.
"""

from __future__ import annotations

from ..errors import (
    HTTPStatusError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    StreamTimeoutError,
)
from ..events import JSONDict

__all__ = ["error_response", "status_of"]

_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                    403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                    429: "rate_limit_error", 500: "api_error", 502: "api_error",
                    503: "overloaded_error", 504: "api_error", 529: "overloaded_error"}
_OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                 403: "permission_error", 404: "not_found_error", 429: "rate_limit_exceeded",
                 500: "server_error", 502: "server_error", 503: "server_error",
                 504: "timeout"}


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
    if dialect == "anthropic":
        etype = kind if kind and kind.endswith("_error") else _ANTHROPIC_TYPES.get(
            status, "api_error")
        return status, {"type": "error", "error": {"type": etype, "message": message}}
    etype = kind or _OPENAI_TYPES.get(status, "server_error")
    code = error.code if isinstance(error, ProviderError) and isinstance(error.code, str) \
        else None
    return status, {"error": {"message": message, "type": etype, "param": None,
                              "code": code or etype}}
