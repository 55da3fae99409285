"""What the dialect-aware faults need to know of each wire format.

For each dialect a :class:`Profile` says which framed event ends the stream (so
``DropTerminator`` can remove it) and how the provider writes an in-band error after
a ``200`` (so ``InsertError`` can add one). Register a profile for your own dialect
with ``PROFILES["my-dialect"] = Profile(...)``; a dialect without one falls back to
its decoder's framing, "the last event is the terminator", and no in-band error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..framing.eventstream import EventStreamParser, encode_message
from ..framing.ndjson import NDJSONParser
from ..framing.sse import SSEParser

__all__ = ["PROFILES", "ErrorSpec", "Profile", "profile_for"]


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """An in-band error to inject: HTTP-like ``code``, provider ``type``, ``message``."""

    code: int = 503
    type: str | None = None  # None: the dialect's usual "overloaded" type
    message: str = "Overloaded (injected fault)"

    def kind(self, default: str) -> str:
        """``type``, or the dialect's own name for an overloaded server."""
        return self.type or default


@dataclass(frozen=True, slots=True)
class Profile:
    """``framing``; ``is_terminator(event_bytes)``; ``error_event(spec)`` (``None``: none)."""

    framing: str
    is_terminator: Callable[[bytes], bool] | None = None
    error_event: Callable[[ErrorSpec], bytes] | None = None


def _sse_data(event: bytes) -> list[str]:
    parser = SSEParser()
    return [e.data for e in parser.feed(event) + parser.close()]


def _sse_json(event: bytes) -> list[Any]:
    out = []
    for data in _sse_data(event):
        try:
            out.append(json.loads(data))
        except ValueError:
            continue
    return out


def _line_json(event: bytes) -> list[Any]:
    parser = NDJSONParser()
    out = []
    for frame in parser.feed(event) + parser.close():
        try:
            out.append(json.loads(frame.data))
        except ValueError:
            continue
    return out


def _json_type(*types: str) -> Callable[[bytes], bool]:
    def test(event: bytes) -> bool:
        return any(type(o) is dict and o.get("type") in types for o in _sse_json(event))
    return test


def _is_done(event: bytes) -> bool:
    return any(d.strip() == "[DONE]" for d in _sse_data(event))


def _gemini_finished(event: bytes) -> bool:
    for obj in _sse_json(event):
        cands = obj.get("candidates") if type(obj) is dict else None
        if type(cands) is list and any(type(c) is dict and c.get("finishReason") for c in cands):
            return True
    return False


def _ollama_done(event: bytes) -> bool:
    return any(type(o) is dict and o.get("done") is True for o in _line_json(event))


def _uni_stop(event: bytes) -> bool:
    objs = _sse_json(event) or _line_json(event)
    return any(type(o) is dict and o.get("event_type") == "stop" for o in objs)


def _bedrock_stop(event: bytes) -> bool:
    try:
        messages = EventStreamParser().feed(event)
    except Exception:
        return False
    return any(m.event_type == "messageStop" for m in messages)


def _sse(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()


def _anthropic_error(spec: ErrorSpec) -> bytes:
    return _sse({"type": "error", "error": {"type": spec.kind("overloaded_error"),
                                          "message": spec.message}}, "error")


def _openai_chat_error(spec: ErrorSpec) -> bytes:
    chunk = {"id": "gen-fault", "object": "chat.completion.chunk", "created": 0, "model": "",
             "error": {"code": spec.code, "message": spec.message,
                       "metadata": {"error_type": spec.kind("provider_unavailable")}},
             "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}
    return _sse(chunk) + b"data: [DONE]\n\n"


def _responses_error(spec: ErrorSpec) -> bytes:
    return _sse({"type": "error", "code": spec.kind("server_error"), "message": spec.message,
                 "param": None, "sequence_number": 999_999}, "error")


def _gemini_error(spec: ErrorSpec) -> bytes:
    return _sse({"error": {"code": spec.code, "message": spec.message,
                             "status": spec.kind("UNAVAILABLE")}})


def _ollama_error(spec: ErrorSpec) -> bytes:
    return (json.dumps({"error": spec.message}) + "\n").encode()


def _image_error(spec: ErrorSpec) -> bytes:
    return _sse({"type": "image_generation.error",
                 "error": {"code": spec.kind("provider_unavailable"), "message": spec.message,
                           "status": spec.code}}) \
        + b"data: [DONE]\n\n"


def _bedrock_error(spec: ErrorSpec) -> bytes:
    body = json.dumps({"message": spec.message, "originalStatusCode": spec.code}).encode()
    kind = spec.kind("ThrottlingException")
    name = kind[:1].lower() + kind[1:]
    return encode_message({":message-type": "exception", ":exception-type": name,
                           ":content-type": "application/json"}, body)


def _uni_error(spec: ErrorSpec, jsonl: bool) -> bytes:
    obj = {"error": {"type": "ProviderError", "message": spec.message, "code": spec.code,
                     "error_type": spec.kind("overloaded_error")}}
    return (json.dumps(obj) + "\n").encode() if jsonl else _sse(obj)


PROFILES: dict[str, Profile] = {
    "anthropic": Profile("sse", _json_type("message_stop"), _anthropic_error),
    "openai-chat": Profile("sse", _is_done, _openai_chat_error),
    "openai-responses": Profile(
        "sse", _json_type("response.completed", "response.incomplete"), _responses_error),
    "gemini": Profile("sse", _gemini_finished, _gemini_error),
    "ollama": Profile("ndjson", _ollama_done, _ollama_error),
    "openrouter-image": Profile("sse", _is_done, _image_error),
    "bedrock": Profile("eventstream", _bedrock_stop, _bedrock_error),
    "bedrock-invoke": Profile("eventstream", None, _bedrock_error),
    "uni": Profile("sse", _uni_stop, lambda spec: _uni_error(spec, False)),
    "uni-jsonl": Profile("ndjson", _uni_stop, lambda spec: _uni_error(spec, True)),
}


def profile_for(dialect: str) -> Profile:
    """The registered profile, or a fallback from the dialect decoder's framing."""
    found = PROFILES.get(dialect)
    if found is not None:
        return found
    from ..dialects import get_dialect  # ValueError for an unknown dialect name

    return Profile(get_dialect(dialect).framing)
