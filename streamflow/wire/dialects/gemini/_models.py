"""Gemini's model list (``GET /v1beta/models``), read from the API.

The API answers ``{"models": [{"name": "models/gemini-2.5-flash", "displayName",
"inputTokenLimit", "outputTokenLimit", "supportedGenerationMethods", ...}],
"nextPageToken"}``. The id a request names is the name without ``models/``; a
model that cannot generate content (an embedding model) is left out.
"""

from __future__ import annotations

from typing import Any

from .._request_values import model_count, model_entries, model_text
from ..request_base import ModelInfo

MODELS_PATH = "/v1beta/models?pageSize=1000"
"""The list under the base URL: one page of the most models the API gives per page."""

_GENERATES = {"generateContent", "streamGenerateContent"}


def read_models(body: Any) -> list[ModelInfo]:
    """The models of a Gemini list body that can generate content."""
    out = []
    for entry in model_entries(body, "models", "the model list"):
        name = model_text(entry.get("name"))
        methods = entry.get("supportedGenerationMethods")
        if name is None or not name.startswith("models/") or len(name) == len("models/"):
            continue
        if isinstance(methods, list) and not _GENERATES.intersection(
                m for m in methods if isinstance(m, str)):
            continue
        out.append(ModelInfo(name.removeprefix("models/"), model_text(entry.get("displayName")),
                             None, "google", model_count(entry.get("inputTokenLimit")),
                             model_count(entry.get("outputTokenLimit"))))
    return out
