"""Where and who: each provider's key and base URL from the variables its official SDK
reads, the model string's names, and a dialect registered without a provider class."""

from __future__ import annotations

import pytest

from streamflow.app.providers import (
    GeminiProvider,
    OpenAIResponsesProvider,
    Provider,
    make_provider,
    provider_for,
)
from streamflow.core.requests import Turn


def test_gemini_reads_the_keys_google_genai_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "gem-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9/")
    provider = provider_for("google:gemini-2.5-pro")
    assert isinstance(provider, GeminiProvider) and provider.api_key == "gem-key"
    request = provider.request([Turn.user("Hi")])
    assert request.url == ("http://127.0.0.1:9/v1beta/models/gemini-2.5-pro"
                           ":streamGenerateContent?alt=sse")
    assert request.headers["x-goog-api-key"] == "gem-key"
    assert "gem-key" not in repr(provider) and "gem-key" not in repr(request)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")  # google-genai prefers this one
    assert GeminiProvider().api_key == "google-key"


def test_responses_asks_for_the_encrypted_reasoning_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = provider_for("openai-responses:o4-mini", thinking_budget=4096)
    assert isinstance(provider, OpenAIResponsesProvider)
    request = provider.request([Turn.user("Hi")])
    assert request.url == "https://api.openai.com/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.json
    assert body["model"] == "o4-mini" and body["stream"] is True
    assert body["reasoning"]["effort"] == "medium"
    assert "reasoning.encrypted_content" in body.get("include", [])


def test_a_provider_names_its_api() -> None:
    with pytest.raises(TypeError, match="names no API"):
        Provider()
    with pytest.raises(ValueError, match="unknown provider"):
        make_provider("nope")
    with pytest.raises(ValueError, match="provider:model"):
        provider_for("claude-sonnet-4-5")
