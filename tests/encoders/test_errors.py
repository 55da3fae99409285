"""A failed stream, re-encoded, fails in the target: its official SDK raises, and
streamflow's decoder raises the provider error with the partial message.

``fail`` writes the dialect's own in-band error (anthropic ``event: error``, the
openai-chat error chunk, the Responses ``error`` event with a nested ``error``
object, Gemini's ``{"error": ...}``, Ollama's ``{"error": "..."}``); ``uni`` keeps
the very type. An error before any event still writes a valid error body.
"""

from __future__ import annotations

import anthropic
import openai
import pytest
from builders import stream, text
from corpus import RECORDINGS, TARGETS, convert, read_back, source
from sdks import READERS, genai

from streamflow import encode
from streamflow.core.errors import IncompleteStreamError, ProviderError, StreamflowError
from streamflow.wire.dialects import get_encoder

FAILED = [rec for rec in RECORDINGS if source(rec).error is not None]
RAISES = {"anthropic": anthropic.APIError, "openai-chat": openai.APIError,
          "openai-responses": openai.APIError, "gemini": genai.errors.APIError}


@pytest.mark.parametrize("target", list(READERS))
@pytest.mark.parametrize("rec", FAILED)
def test_official_sdk_raises_for_a_failed_stream(rec: str, target: str) -> None:
    src = source(rec)
    # bad_args: the anthropic SDK parses the broken arguments itself and raises ValueError
    with pytest.raises((RAISES[target], ValueError)):
        READERS[target](convert(src, target))


@pytest.mark.parametrize("target", TARGETS)
def test_error_before_any_event_is_a_valid_error_body(target: str) -> None:
    enc = get_encoder(target)()
    raw = enc.fail(ProviderError("quota exceeded", code=429, type="rate_limit_error"))
    back = read_back(raw, target)
    assert isinstance(back.error, ProviderError) and "quota exceeded" in back.error.message


@pytest.mark.parametrize("target", TARGETS)
def test_encode_writes_the_error_then_raises_it_again(target: str) -> None:
    events = stream(text("Hello, wor"))[:2]
    cut = IncompleteStreamError("the body ended early")

    def failing():
        yield from events
        raise cut

    chunks: list[bytes] = []
    with pytest.raises(IncompleteStreamError):
        for chunk in encode(failing(), target):
            chunks.append(chunk)
    back = read_back(b"".join(chunks), target)
    assert isinstance(back.error, StreamflowError)
    assert back.error.partial is not None and back.error.partial.text == "Hello, wor"
    if target.startswith("uni"):
        assert isinstance(back.error, IncompleteStreamError)


@pytest.mark.parametrize("target", TARGETS)
def test_feeding_after_the_end_is_a_caller_bug(target: str) -> None:
    enc = get_encoder(target)()
    for event in stream(text("x")):
        enc.feed(event)
    with pytest.raises(RuntimeError):
        enc.feed(stream(text("y"))[0])
    with pytest.raises(RuntimeError):
        enc.fail(ProviderError("late"))
