"""encode(dialect): UniEvents -> body bytes as they come, per subscription, errors in-band."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import reactivex
from reactivex import operators as ops

import streamflow
from streamflow import IncompleteStreamError, ProviderError
from streamflow.reactive.operators import encode, pipeline
from streamflow.reactive.sources import from_bytes

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
BROKEN = (DATA / "error_after_text.sse").read_bytes()


def collect(observable: Any) -> tuple[list[Any], list[Exception], list[bool]]:
    items: list[Any] = []
    errors: list[Exception] = []
    done: list[bool] = []
    observable.subscribe(items.append, errors.append, lambda: done.append(True))
    return items, errors, done


def test_same_bytes_as_streamflow_encode_and_one_chunk_per_writing_event() -> None:
    events = list(streamflow.StreamDecoder("anthropic").feed(TURN))
    chunks, errors, done = collect(from_bytes(TURN, chunk_size=7).pipe(
        pipeline(), encode("openai-chat")))
    assert not errors and done == [True]
    assert b"".join(chunks) == b"".join(streamflow.encode(events, "openai-chat"))
    assert chunks[-1].endswith(b"data: [DONE]\n\n")
    assert streamflow.assemble(b"".join(chunks), "openai-chat").text == \
        streamflow.assemble(TURN).text


def test_each_subscription_has_its_own_encoder() -> None:
    source = from_bytes(TURN).pipe(pipeline(), encode("anthropic"))
    first, _, _ = collect(source)
    second, _, _ = collect(source)
    assert b"".join(first).count(b"event: message_start") == 1
    assert len(first) == len(second) and b"".join(second).count(b"event: message_start") == 1


def test_an_upstream_error_is_written_in_band_then_raised() -> None:
    chunks, errors, done = collect(from_bytes(BROKEN).pipe(pipeline(), encode("anthropic")))
    assert len(errors) == 1 and isinstance(errors[0], ProviderError) and not done
    assert b"event: error" in chunks[-1]
    with pytest.raises(ProviderError) as info:
        streamflow.assemble(b"".join(chunks), "anthropic")
    assert info.value.partial is not None and info.value.partial.text


def test_a_stream_cut_before_stop_is_never_a_silent_end() -> None:
    chunks, errors, done = collect(from_bytes(TURN).pipe(
        pipeline(), ops.take(2), encode("openai-responses")))
    assert isinstance(errors[0], IncompleteStreamError) and not done
    assert b"event: error" in chunks[-1]


def test_unknown_dialect_or_option_fails_when_the_pipeline_is_built() -> None:
    with pytest.raises(ValueError):
        encode("nope")
    with pytest.raises(TypeError):
        encode("anthropic", colour=True)
    assert isinstance(reactivex.of(1).pipe(ops.filter(lambda _: False), encode("uni")),
                      reactivex.Observable)
