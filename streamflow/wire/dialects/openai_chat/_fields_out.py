"""The JSON fields an openai-chat chunk carries beside its deltas: usage and fidelity.

``openai_usage_json`` writes a :class:`~streamflow.core.events.Usage` as the chat ``usage``
object; ``reasoning_details_of`` and ``extra_content_of`` carry a thinking group's or a
tool call's ``fidelity`` (signatures, Gemini thought signatures) the way OpenAI-compatible
providers send them back.
"""

from __future__ import annotations

from typing import Any

from ....core.events import JSONDict, Usage
from .decode import openai_usage


def openai_usage_json(usage: Usage | None) -> JSONDict | None:
    """The chat ``usage`` object of ``usage`` (the raw one kept when it is OpenAI-style)."""
    if usage is None:
        return None
    raw = usage.provider if isinstance(usage.provider, dict) else {}
    out: JSONDict = dict(raw) if ("prompt_tokens" in raw or "completion_tokens" in raw) else {}
    now = openai_usage(out)
    if now.prompt_tokens != usage.prompt_tokens and usage.prompt_tokens is not None:
        out["prompt_tokens"] = usage.prompt_tokens
    if now.response_tokens != usage.response_tokens and usage.response_tokens is not None:
        out["completion_tokens"] = usage.response_tokens
    if now.cached_tokens != usage.cached_tokens and usage.cached_tokens is not None:
        out["prompt_tokens_details"] = {**(out.get("prompt_tokens_details") or {}),
                                        "cached_tokens": usage.cached_tokens}
    if now.cache_write_tokens != usage.cache_write_tokens and usage.cache_write_tokens is not None:
        out["prompt_tokens_details"] = {**(out.get("prompt_tokens_details") or {}),
                                        "cache_write_tokens": usage.cache_write_tokens}
    if now.thoughts_tokens != usage.thoughts_tokens and usage.thoughts_tokens is not None:
        out["completion_tokens_details"] = {**(out.get("completion_tokens_details") or {}),
                                            "reasoning_tokens": usage.thoughts_tokens}
    if now.cost != usage.cost and usage.cost is not None:
        out["cost"] = usage.cost
    if not out:
        return None
    if "total_tokens" not in out and ("prompt_tokens" in out or "completion_tokens" in out):
        out["total_tokens"] = (out.get("prompt_tokens") or 0) + (out.get("completion_tokens") or 0)
    return out


def reasoning_details_of(fidelity: JSONDict) -> list[Any] | None:
    """``reasoning_details`` entries that carry a thinking group's ``fidelity``."""
    details = fidelity.get("reasoning_details")
    if isinstance(details, list):
        return details
    sig = fidelity.get("signature") or fidelity.get("thought_signature")
    if not sig:
        return None
    fmt = "google-gemini-v1" if "thought_signature" in fidelity else "anthropic-claude-v1"
    return [{"type": "reasoning.text", "text": "", "signature": sig, "format": fmt}]


def extra_content_of(fidelity: JSONDict) -> Any:
    """The ``extra_content`` of a tool call carrying a group's ``fidelity``."""
    if "extra_content" in fidelity:
        return fidelity["extra_content"]
    if "thought_signature" in fidelity:
        return {"google": {"thought_signature": fidelity["thought_signature"]}}
    return {"streamflow": fidelity}
