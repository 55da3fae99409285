"""The facts of a dialect live on its Decoder (issue 10, item 6).

The terminator test and the in-band error writer the faults use, the provider name
the OpenTelemetry sink reports and the HTTP error envelope the sources read are
attributes of the dialect's decoder class, written once in its folder.
"""

from __future__ import annotations

import pytest
from realdata import fault_bodies

from streamflow import StreamDecoder
from streamflow.core.errors import ProviderError
from streamflow.faults.profiles import profile_for
from streamflow.reactive.sinks.semconv import provider_name
from streamflow.reactive.sources._http_errors import status_error
from streamflow.wire.dialects import get_dialect
from streamflow.wire.framing import make_framer

BODIES = fault_bodies()


@pytest.mark.parametrize("dialect", BODIES.available())
def test_the_dialect_knows_its_terminator(dialect: str) -> None:
    cls = get_dialect(dialect)
    framer = make_framer(cls.framing)
    frames = framer.feed(BODIES.body_for(dialect)) + framer.close()
    marks = [cls.is_terminator(f) for f in frames]
    assert any(marks), dialect
    assert not any(marks[:1]), dialect  # the first event never ends a stream


@pytest.mark.parametrize("dialect", BODIES.available())
def test_the_dialects_in_band_error_decodes_to_a_provider_error(dialect: str) -> None:
    cls = get_dialect(dialect)
    frame = cls.error_frame(529, None, "Overloaded")
    assert frame is not None
    dec = StreamDecoder(dialect)
    with pytest.raises(ProviderError) as info:
        dec.feed(frame)
        dec.close()
    assert "Overloaded" in str(info.value)
    assert profile_for(dialect).error_event is not None


@pytest.mark.parametrize(("dialect", "name"), [
    ("anthropic", "anthropic"), ("openai-chat", "openai"), ("openai-responses", "openai"),
    ("gemini", "gcp.gemini"), ("bedrock", "aws.bedrock"), ("ollama", "ollama"),
    ("groq", "groq"), ("my-own", "my-own")])
def test_the_provider_name_comes_from_the_dialect(dialect: str, name: str) -> None:
    assert provider_name(dialect) == name


def test_each_providers_http_error_envelope_is_read_by_its_dialect() -> None:
    anthropic = status_error(529, {}, b'{"type":"error","error":{"type":"overloaded_error",'
                                      b'"message":"Overloaded"},"request_id":"req_1"}')
    assert (anthropic.type, anthropic.request_id) == ("overloaded_error", "req_1")
    openai = status_error(429, {}, b'{"error":{"message":"slow down","code":"rate_limit"}}')
    assert (openai.message, openai.type) == ("HTTP 429: slow down", "rate_limit")
    gemini = status_error(503, {}, b'{"error":{"code":503,"message":"busy",'
                                   b'"status":"UNAVAILABLE"}}')
    assert gemini.type == "UNAVAILABLE"
    bedrock = status_error(429, {"x-amzn-errortype": "ThrottlingException:http://x"},
                           b'{"message":"Too many requests"}')
    assert (bedrock.type, bedrock.message) == ("ThrottlingException",
                                               "HTTP 429: Too many requests")
