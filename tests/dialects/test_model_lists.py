"""The request sides' model lists: hostile list bodies read into bounded ``ModelInfo`` s."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamflow.core.errors import ProtocolError
from streamflow.wire.dialects import REQUESTS, get_request
from streamflow.wire.dialects._request_values import MODEL_TEXT
from streamflow.wire.dialects.request_base import MAX_MODELS, ModelInfo

READERS = [name for name in REQUESTS if get_request(name).read_models is not None]
WRITERS = [name for name in REQUESTS if get_request(name).models_body is not None]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
KEYS = st.sampled_from(["id", "name", "display_name", "displayName", "created", "created_at",
                        "owned_by", "context_length", "max_tokens", "max_input_tokens",
                        "inputTokenLimit", "outputTokenLimit", "lifecycle", "top_provider",
                        "supportedGenerationMethods"])
ENTRY = st.dictionaries(KEYS, JSON | st.just("models/m") | st.just("2025-01-01T00:00:00Z"),
                        max_size=8)
BODY = st.dictionaries(st.sampled_from(["data", "models", "object"]),
                       st.lists(ENTRY | JSON, max_size=6) | JSON, max_size=3) | JSON


def test_every_upstream_and_client_side_has_its_list() -> None:
    assert set(READERS) == {"anthropic", "openai-chat", "openai-responses", "gemini"}
    assert set(WRITERS) == {"anthropic", "openai-chat", "openai-responses"}


@pytest.mark.parametrize("name", READERS)
@given(body=BODY)
def test_a_hostile_list_gives_bounded_models_or_a_protocol_error(name: str, body: Any) -> None:
    side = get_request(name)
    assert side.read_models is not None
    try:
        models = side.read_models(body)
    except ProtocolError:
        return
    assert len(models) <= MAX_MODELS
    for model in models:
        assert isinstance(model.id, str) and 0 < len(model.id) <= MODEL_TEXT
        assert model.display_name is None or len(model.display_name) <= MODEL_TEXT
        for count in (model.created, model.max_input_tokens, model.max_output_tokens):
            assert count is None or (type(count) is int and count >= 0)
        for writer in WRITERS:  # what was read can always be written
            body_out = get_request(writer).models_body([model])  # type: ignore[misc]
            assert body_out


def test_a_list_is_cut_at_max_models_and_long_ids_left_out() -> None:
    body = {"data": [{"id": "x" * (MODEL_TEXT + 1)}]
            + [{"id": f"m{i}"} for i in range(MAX_MODELS + 5)]}
    models = get_request("openai-chat").read_models(body)  # type: ignore[misc]
    assert len(models) == MAX_MODELS - 1  # the first MAX_MODELS entries, less the long id
    assert (models[0].id, models[-1].id) == ("m0", f"m{MAX_MODELS - 2}")


def test_a_date_past_year_9999_is_written_as_unknown() -> None:
    out = get_request("anthropic").models_body([ModelInfo("m", created=10**15)])  # type: ignore[misc]
    assert out["data"][0]["created_at"] == "1970-01-01T00:00:00Z"
