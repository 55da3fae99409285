"""Structured output from a real server: llama.cpp answering a ``response_format`` JSON schema
(tests/data/live/chat_schema.sse, recorded by tests/live/record.py), at any chunking."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

import streamflow
from streamflow.core.structured.snapshots import _covers
from streamflow.core.structured.updates import plain

LIVE = Path(__file__).resolve().parents[1] / "data" / "live"
BODY = (LIVE / "chat_schema.sse").read_bytes()
REQUEST = json.loads((LIVE / "chat_schema.sse.meta").read_text())["request"]


class Place(BaseModel):
    model_config = ConfigDict(extra="forbid")
    city: str
    country: str


def test_the_recording_asked_for_this_schema() -> None:
    sent = REQUEST["response_format"]["json_schema"]["schema"]
    assert set(sent["properties"]) == set(Place.model_json_schema()["properties"])
    assert sent["required"] == ["city", "country"]


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, len(BODY)), max_size=40))
def test_the_servers_answer_streams_into_growing_partials_and_validates(
        cuts: list[int]) -> None:
    points = sorted({0, len(BODY), *cuts})
    chunks = [BODY[a:b] for a, b in itertools.pairwise(points) if b > a]
    snapshots = []
    with streamflow.stream_sync(chunks, dialect="openai-chat", output=Place) as s:
        for _event in s:
            snapshots.append(s.partial_output)
        final = s.final_output()
        text = s.message.text
    assert final == Place.model_validate_json(text)  # what the server sent, strictly
    seen = [plain(p) for p in snapshots if p is not None]
    for before, after in itertools.pairwise(seen):
        assert _covers(after, before)
    assert seen[-1] == final.model_dump()
