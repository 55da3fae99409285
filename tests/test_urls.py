"""Untrusted citation URLs: only http(s), at most 8,192 UTF-8 bytes; others kept but flagged."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from streamflow import TextItem, assemble
from streamflow.core.urls import (
    MAX_URL_BYTES,
    check_url,
    find_url_flags,
    flag_provider,
    is_safe_url,
)
from streamflow.wire.dialects import dialect_names

LONG_OK = "https://example.com/" + "a" * (MAX_URL_BYTES - len("https://example.com/"))
# 4,095 characters, but 8,194 UTF-8 bytes: the limit counts bytes
LONG_UTF8 = "https://example.com/" + "é" * 4087


@pytest.mark.parametrize(("url", "reason"), [
    ("https://example.com/a?b=1#c", None),
    ("http://例え.jp/パス", None),
    ("HTTPS://EXAMPLE.COM", None),
    (LONG_OK, None),
    (LONG_OK + "a", "too_long"),
    (LONG_UTF8, "too_long"),
    ("javascript:alert(document.cookie)", "scheme"),
    (" JavaScript:alert(1)", "scheme"),
    ("java\tscript:alert(1)", "scheme"),  # tabs are stripped by URL parsers: still javascript
    ("data:text/html;base64,PHNjcmlwdD4=", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("ftp://example.com/x", "scheme"),
    ("//example.com/no-scheme", "scheme"),
    ("https://", "no_host"),
    ("https:///path-only", "no_host"),
    ("http://[::1", "malformed"),
    (None, "not_a_string"),
    (42, "not_a_string"),
    (["https://example.com"], "not_a_string"),
])
def test_check_url(url: Any, reason: str | None) -> None:
    assert check_url(url) == reason
    assert is_safe_url(url) is (reason is None)


def test_only_citation_subtrees_are_checked() -> None:
    provider = {
        "citations": [{"url": "https://ok.example"}, {"url": "javascript:x()", "title": "t"}],
        "annotations": [{"type": "url_citation", "url_citation": {"url": "file:///x"}}],
        "image_url": {"url": "data:image/png;base64,AAAA"},  # content, not a link
        "raw": {"deep": {"citations": [{"uri": "data:,x"}]}},
        "extra_blocks": [{"type": "web_search_tool_result", "content": [
            {"type": "web_search_result", "url": "javascript:y()"}]}],
    }
    assert find_url_flags(provider) == [
        {"path": "citations/1/url", "reason": "scheme", "scheme": "javascript"},
        {"path": "annotations/0/url_citation/url", "reason": "scheme", "scheme": "file"},
        {"path": "raw/deep/citations/0/uri", "reason": "scheme", "scheme": "data"},
        {"path": "extra_blocks/0/content/0/url", "reason": "scheme", "scheme": "javascript"},
    ]
    flagged = flag_provider(provider)
    assert flagged is not None and flagged is not provider and "url_flags" not in provider
    assert flag_provider({"citations": [{"url": "https://ok.example"}]}) == \
        {"citations": [{"url": "https://ok.example"}]}
    assert flag_provider(None) is None


def test_hostile_nesting_does_not_blow_the_stack() -> None:
    deep: Any = {"url": "javascript:x"}
    for _ in range(5000):
        deep = {"citations": [deep]}
    assert find_url_flags(deep) == []  # too deep to be a citation: walked only 32 levels


def sse(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(obj)}\n\n".encode()


def anthropic_with_citations(urls: list[str]) -> bytes:
    out = [sse({"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}),
           sse({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
           sse({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "According to sources"}})]
    out += [sse({"type": "content_block_delta", "index": 0, "delta": {
        "type": "citations_delta", "citation": {
            "type": "web_search_result_location", "url": u, "title": f"t{i}",
            "cited_text": "x", "encrypted_index": "e"}}}) for i, u in enumerate(urls)]
    out += [sse({"type": "content_block_stop", "index": 0}),
            sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}),
            sse({"type": "message_stop"})]
    return b"".join(out)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test: URLs are never fetched."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("streamflow tried to open a connection")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_anthropic_citations_are_kept_and_unsafe_urls_flagged(no_network: None) -> None:
    urls = ["https://good.example/a", "javascript:alert(1)", LONG_OK + "zz",
            "data:text/html,<script>", "https://good.example/b"]
    message = assemble(anthropic_with_citations(urls), "anthropic")
    (item,) = message.items
    assert isinstance(item, TextItem) and item.text == "According to sources"
    assert item.provider is not None
    assert [c["url"] for c in item.provider["citations"]] == urls  # every URL kept as data
    assert item.provider["url_flags"] == [
        {"path": "citations/1/url", "reason": "scheme", "scheme": "javascript"},
        {"path": "citations/2/url", "reason": "too_long"},
        {"path": "citations/3/url", "reason": "scheme", "scheme": "data"},
    ]


def test_safe_citations_get_no_flags() -> None:
    message = assemble(anthropic_with_citations(["https://a.example", "http://b.example"]))
    assert message.items[0].provider is not None
    assert "url_flags" not in message.items[0].provider


@pytest.mark.skipif("openai-chat" not in dialect_names(), reason="openai-chat not registered")
def test_openai_chat_annotations_are_kept_and_unsafe_urls_flagged(no_network: None) -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({"id": "g", "object": "chat.completion.chunk", "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def note(url: str) -> dict[str, Any]:
        return {"type": "url_citation", "url_citation": {
            "url": url, "title": "t", "start_index": 0, "end_index": 4}}

    body = (chunk({"role": "assistant", "content": "Text"})
            + chunk({"content": " here", "annotations": [note("https://ok.example/x")]})
            + chunk({"annotations": [note("file:///etc/shadow"), note("vbscript:msgbox")]})
            + chunk({}, "stop") + b"data: [DONE]\n\n")
    (item,) = assemble(body, "openai-chat").items
    assert isinstance(item, TextItem) and item.text == "Text here"
    assert item.provider is not None and len(item.provider["annotations"]) == 3
    assert item.provider["url_flags"] == [
        {"path": "annotations/1/url_citation/url", "reason": "scheme", "scheme": "file"},
        {"path": "annotations/2/url_citation/url", "reason": "scheme", "scheme": "vbscript"},
    ]
