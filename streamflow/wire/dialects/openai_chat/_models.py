"""OpenAI's model list (``GET /v1/models``), shared by both OpenAI dialects.

The API answers ``{"object": "list", "data": [{"id", "object": "model", "created",
"owned_by"}]}`` (``created`` in Unix seconds). OpenAI-compatible servers add to
the entries: OpenRouter a ``name``, the ``context_length`` and
``top_provider.max_completion_tokens``, which are read when present.
"""

from __future__ import annotations

from typing import Any

from ....core.events import JSONDict
from .._request_values import model_count, model_entries, model_text
from ..request_base import ModelInfo

MODELS_PATH = "/models"
"""The list under the base URL (which ends in ``/v1``, as the SDK's)."""


def read_models(body: Any) -> list[ModelInfo]:
    """The models of an OpenAI (or OpenAI-compatible) list body."""
    out = []
    for entry in model_entries(body, "data", "the model list"):
        model_id = model_text(entry.get("id"))
        if model_id is None:
            continue
        top = entry.get("top_provider")
        out.append(ModelInfo(model_id, model_text(entry.get("name")),
                             model_count(entry.get("created")),
                             model_text(entry.get("owned_by")),
                             model_count(entry.get("context_length")),
                             model_count(top.get("max_completion_tokens"))
                             if isinstance(top, dict) else None))
    return out


def models_body(models: list[ModelInfo]) -> JSONDict:
    """``models`` as OpenAI lists them (``created`` 0 and ``owned_by`` ``"unknown"``
    where the upstream's list did not say)."""
    return {"object": "list",
            "data": [{"id": model.id, "object": "model", "created": model.created or 0,
                      "owned_by": model.owned_by or "unknown"} for model in models]}
