"""Where each API takes a request: the URL and headers for a built body (sans-IO).

``upstream_request("gemini", "https://generativelanguage.googleapis.com", request,
api_key=...)`` builds the body with the dialect's format builder and returns the
streaming :class:`HTTPRequest`. Base URLs follow the official SDKs: OpenAI's
includes ``/v1``, Anthropic's and Gemini's do not.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote

from .base import HTTPRequest
from .formats import build_request
from .request import ChatRequest

__all__ = ["ENDPOINTS", "ANTHROPIC_VERSION", "upstream_request"]

ANTHROPIC_VERSION = "2023-06-01"

ENDPOINTS: dict[str, str] = {
    "anthropic": "/v1/messages",
    "openai-chat": "/chat/completions",
    "openai-responses": "/responses",
    "gemini": "/v1beta/models/{model}:streamGenerateContent?alt=sse",
}
"""Dialect -> path under its base URL (``{model}`` filled in for Gemini)."""


def upstream_request(dialect: str, base_url: str, request: ChatRequest, *,
                     api_key: str | None = None,
                     headers: dict[str, str] | None = None) -> HTTPRequest:
    """The streaming HTTP request of ``request`` for the ``dialect`` API at ``base_url``."""
    streaming = replace(request, stream=True)
    body = build_request(dialect, streaming)
    if dialect == "openai-chat" and "api.openai.com" in base_url:
        body["max_completion_tokens"] = body.pop("max_tokens", None) or request.max_tokens
        if body["max_completion_tokens"] is None:
            del body["max_completion_tokens"]
    try:
        path = ENDPOINTS[dialect]
    except KeyError:
        raise ValueError(f"no endpoint known for dialect {dialect!r}") from None
    url = base_url.rstrip("/") + path.format(model=quote(request.model, safe=""))
    out = {"content-type": "application/json", "accept": "text/event-stream"}
    if dialect == "anthropic":
        out["anthropic-version"] = ANTHROPIC_VERSION
        if api_key:
            out["x-api-key"] = api_key
    elif dialect == "gemini":
        if api_key:
            out["x-goog-api-key"] = api_key
    elif api_key:
        out["authorization"] = f"Bearer {api_key}"
    out.update(headers or {})
    return HTTPRequest(url, out, body)
