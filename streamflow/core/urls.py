"""Untrusted URLs from the model: citation and annotation links are checked, never fetched.

A URL a provider streams (an Anthropic ``citations_delta`` ``url``, an OpenAI
``url_citation`` annotation, a Gemini grounding ``uri``) is model output: it may be
``javascript:``, ``data:``, ``file:`` or megabytes long. streamflow never fetches one.
A URL is *safe* when it is a string of at most :data:`MAX_URL_BYTES` (8,192) UTF-8
bytes whose scheme is ``http`` or ``https`` with a host.

Unsafe URLs are **kept as data** (nothing a provider sends is dropped) and
**flagged**: when a group closes, the emitter lists them on the ``.done`` item's
``provider["url_flags"]``, one entry per URL::

    {"path": "citations/0/url", "reason": "scheme", "scheme": "javascript"}

``reason`` is ``"scheme"`` (not http/https), ``"too_long"`` (over 8,192 bytes),
``"no_host"``, ``"malformed"`` or ``"not_a_string"``. Renderers and apps must only
turn a URL into a link when :func:`is_safe_url` says so::

    >>> is_safe_url("https://example.com/a")
    True
    >>> check_url("javascript:alert(1)")
    'scheme'
    >>> find_url_flags({"citations": [{"url": "data:text/html,hi"}]})
    [{'path': 'citations/0/url', 'reason': 'scheme', 'scheme': 'data'}]

Only the parts of a provider slot that hold citations are checked: subtrees under a
key in :data:`CITATION_KEYS` and objects whose ``type`` is in :data:`CITATION_TYPES`
(web search results kept whole); an image's ``data:`` URL elsewhere is content, not
a link. The walk stops 32 levels deep. Message-level data (``message.provider``:
server-tool blocks, grounding metadata) is not flagged by the emitter; check it with
``find_url_flags(message.provider)``. Sans-IO: standard library only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "CITATION_KEYS",
    "CITATION_TYPES",
    "MAX_URL_BYTES",
    "SAFE_SCHEMES",
    "URL_KEYS",
    "check_url",
    "find_url_flags",
    "flag_provider",
    "is_safe_url",
]

MAX_URL_BYTES = 8192
SAFE_SCHEMES: frozenset[str] = frozenset({"http", "https"})
CITATION_KEYS: frozenset[str] = frozenset({
    "citations", "annotations", "citation", "url_citation", "groundingMetadata",
    "grounding_metadata", "groundingChunks", "grounding_chunks", "sources",
})
CITATION_TYPES: frozenset[str] = frozenset({
    "url_citation", "web_search_result", "web_search_result_location", "web",
})
URL_KEYS: frozenset[str] = frozenset({"url", "uri"})
_MAX_DEPTH = 32


def check_url(url: Any) -> str | None:
    """``None`` when ``url`` is safe to show as a link, else the reason it is not."""
    if type(url) is not str:
        return "not_a_string"
    if len(url) > MAX_URL_BYTES or len(url.encode("utf-8", "surrogatepass")) > MAX_URL_BYTES:
        return "too_long"
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "malformed"
    if parts.scheme.lower() not in SAFE_SCHEMES:
        return "scheme"
    if not parts.netloc or not parts.hostname:
        return "no_host"
    return None


def is_safe_url(url: Any) -> bool:
    """True for an ``http``/``https`` URL with a host, at most 8,192 UTF-8 bytes."""
    return check_url(url) is None


def _scheme(url: str) -> str:
    head, colon, _ = url[:64].partition(":")
    return head.strip().lower() if colon else ""


def _walk(value: Any, path: str, inside: bool, depth: int, out: list[dict[str, Any]]) -> None:
    if depth > _MAX_DEPTH:
        return
    if type(value) is dict:
        inside = inside or (type(value.get("type")) is str and value["type"] in CITATION_TYPES)
        for key, child in value.items():
            key_s = str(key)
            where = f"{path}/{key_s}" if path else key_s
            if inside and key_s in URL_KEYS and child is not None \
                    and type(child) is not dict and type(child) is not list:
                reason = check_url(child)
                if reason is not None:
                    flag: dict[str, Any] = {"path": where, "reason": reason}
                    if reason == "scheme":
                        flag["scheme"] = _scheme(child)
                    out.append(flag)
            else:
                _walk(child, where, inside or key_s in CITATION_KEYS, depth + 1, out)
    elif type(value) is list:
        for i, child in enumerate(value):
            _walk(child, f"{path}/{i}", inside, depth + 1, out)


def find_url_flags(provider: Any) -> list[dict[str, Any]]:
    """The unsafe citation URLs in a provider slot: ``[{"path", "reason", ...}]`` (see module)."""
    out: list[dict[str, Any]] = []
    _walk(provider, "", False, 0, out)
    return out


def flag_provider(provider: dict[str, Any] | None) -> dict[str, Any] | None:
    """``provider`` with ``url_flags`` set when it holds unsafe citation URLs (else unchanged).

    The URLs themselves are left as they are; a copy is returned when flags are added.
    """
    if not provider:
        return provider
    flags = find_url_flags({k: v for k, v in provider.items() if k != "url_flags"})
    if not flags:
        return provider
    return {**provider, "url_flags": flags}
