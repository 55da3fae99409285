"""What an OpenAI-compatible chat chunk says besides its choices: usage, errors, finish reasons.

:func:`openai_usage` maps a ``usage`` object onto :class:`~streamflow.core.events.Usage`,
:func:`provider_error` a top-level ``error`` onto :class:`ProviderError`, and
``FINISH_REASONS`` the choice's ``finish_reason`` onto the neutral finish reason. The
envelope key sets say which chunk keys are message metadata and which ride on events.
"""

from __future__ import annotations

from typing import Any, Final

from ....core.errors import ProviderError
from ....core.events import FinishReason, JSONDict, Usage
from .._readers import token_count

FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
}
NOT_META: Final = frozenset({"choices", "usage", "error", "object"})
#: envelope keys that describe the whole message; any other envelope key (llama.cpp's
#: ``timings``) may change from chunk to chunk, so it also rides on its chunk's events
MESSAGE_KEYS: Final = frozenset({"id", "model", "created", "system_fingerprint", "provider",
                                "service_tier", "object"})


def openai_usage(raw: JSONDict) -> Usage:
    """Map an OpenAI-style usage object onto :class:`Usage` (raw kept in ``provider``)."""
    prompt_details = raw.get("prompt_tokens_details")
    done_details = raw.get("completion_tokens_details")
    cached = token_count(prompt_details, "cached_tokens")
    if cached is None:
        cached = token_count(raw, "prompt_cache_hit_tokens")
    cost = raw.get("cost")
    if type(cost) not in (int, float):
        cost = None
    return Usage(cached_tokens=cached, prompt_tokens=token_count(raw, "prompt_tokens"),
                 thoughts_tokens=token_count(done_details, "reasoning_tokens"),
                 response_tokens=token_count(raw, "completion_tokens"),
                 cost=None if cost is None else float(cost), provider=raw,
                 cache_write_tokens=token_count(prompt_details, "cache_write_tokens"))


def provider_error(error: Any, chunk: JSONDict) -> ProviderError:
    """The :class:`ProviderError` a chunk's top-level ``error`` stands for (``body``: the chunk)."""
    code: Any = None
    kind: Any = None
    if type(error) is dict:
        message = error.get("message") or error.get("error") or "provider error"
        code = error.get("code")
        metadata = error.get("metadata")
        if type(metadata) is dict:
            kind = metadata.get("error_type")
        kind = kind or error.get("type") or (code if type(code) is str else None)
    else:
        message = error
    if type(code) not in (int, str):
        code = None
    rid = chunk.get("id")
    return ProviderError(str(message), code=code, type=str(kind) if kind else None,
                         request_id=rid if type(rid) is str and rid else None, body=chunk)
