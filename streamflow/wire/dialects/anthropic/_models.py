"""Anthropic's model list (``GET /v1/models``): read from the API, written for its clients.

The API answers ``{"data": [{"type": "model", "id", "display_name", "created_at",
"max_input_tokens", "max_tokens", "lifecycle", ...}], "has_more", "first_id",
"last_id"}``, ``created_at`` in RFC 3339 (the epoch when unknown). A ``retired``
model is left out (requests naming it fail).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ....core.events import JSONDict
from .._request_values import model_count, model_entries, model_text
from ..request_base import ModelInfo

MODELS_PATH = "/v1/models?limit=1000"
"""The list under the base URL: one page of the most models the API gives per page."""


def read_models(body: Any) -> list[ModelInfo]:
    """The models of an Anthropic list body."""
    out = []
    for entry in model_entries(body, "data", "the model list"):
        model_id = model_text(entry.get("id"))
        lifecycle = entry.get("lifecycle")
        if model_id is None or lifecycle == "retired":
            continue
        out.append(ModelInfo(model_id, model_text(entry.get("display_name")),
                             _seconds(entry.get("created_at")), "anthropic",
                             model_count(entry.get("max_input_tokens")),
                             model_count(entry.get("max_tokens")),
                             deprecated=lifecycle == "deprecated"))
    return out


def models_body(models: list[ModelInfo]) -> JSONDict:
    """``models`` as Anthropic lists them (one page holding them all)."""
    data: list[JSONDict] = []
    for model in models:
        entry: JSONDict = {"type": "model", "id": model.id,
                           "display_name": model.display_name or model.id,
                           "created_at": _rfc3339(model.created),
                           "lifecycle": "deprecated" if model.deprecated else "active"}
        if model.max_input_tokens is not None:
            entry["max_input_tokens"] = model.max_input_tokens
        if model.max_output_tokens is not None:
            entry["max_tokens"] = model.max_output_tokens
        data.append(entry)
    return {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}


def _seconds(value: Any) -> int | None:
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0, int(moment.timestamp()))


def _rfc3339(seconds: int | None) -> str:
    try:
        moment = datetime.fromtimestamp(seconds or 0, UTC)
    except (OverflowError, OSError, ValueError):  # past year 9999: unknown, as the epoch
        moment = datetime.fromtimestamp(0, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
