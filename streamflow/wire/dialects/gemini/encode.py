"""Encoder ``gemini``: UniEvents as ``streamGenerateContent?alt=sse`` (data-only SSE).

Every fragment is one ``GenerateContentResponse`` chunk with one part, carrying
``responseId`` and ``modelVersion`` from the first event's ``provider``:

* ``text`` -> ``{"text"}``, ``thinking`` -> ``{"text", "thought": true}``; a fragment's
  ``fidelity`` signature (Gemini's ``thought_signature``, else Anthropic's
  ``signature``) -> ``thoughtSignature`` on that part (a value that is not base64,
  which google-genai would reject, rides as ``streamflowSignature`` instead).
  ``provider["citations"]`` / ``["logprobs"]`` go back to the candidate's ``citationMetadata`` /
  ``logprobsResult``; other provider keys of a fragment ride on its part.
* ``tool_call`` -> one whole ``functionCall`` part at the group's ``.done`` (``args``
  the parsed object, ``id`` unless the reader made it up, ``thoughtSignature`` from
  ``fidelity``, also from an openai-chat ``extra_content.google``).
* ``inline_data`` -> an ``inlineData`` part; ``inline_thinking`` (opaque reasoning)
  -> an empty ``thought`` part whose ``thoughtSignature`` is the data.
* Stop: the parts kept in ``provider["extra_parts"]``, then a last chunk with the
  ``finishReason``, the candidate fields kept in ``provider["candidate"]`` and the
  ``usageMetadata``. :meth:`fail` writes ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from ....core.errors import StreamflowError
from ....core.events import (
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
)
from .._frames_out import sse
from ..encoder import Encoder, error_fields, native_reason, slot_index
from .decode import gemini_usage

__all__ = ["GeminiEncoder", "gemini_usage_json", "is_base64"]

_RIDING = frozenset({"citations", "logprobs", "candidate_index", "choice_index",
                     "synthetic_id"})
_OWN_META = frozenset({"id", "model", "finish_reason", "candidate", "candidates",
                       "extra_parts", "prompt_feedback"})
_RESERVED = frozenset({"error", "candidates", "usageMetadata", "promptFeedback"})
_STATUS = {"overloaded_error": (503, "UNAVAILABLE"), "rate_limit_error": (429,
            "RESOURCE_EXHAUSTED"), "rate_limit_exceeded": (429, "RESOURCE_EXHAUSTED"),
           "invalid_request_error": (400, "INVALID_ARGUMENT")}
# the part fields google-genai and the decoder read as content: never from a provider slot
# (another dialect's data would show as text or calls the upstream never sent)
_PART_CONTENT = frozenset({"text", "thought", "thoughtSignature", "functionCall",
                           "functionResponse", "inlineData", "fileData", "executableCode",
                           "codeExecutionResult"})
_MAPPED = frozenset({"text", "thought", "functionCall", "inlineData"})  # never a kept part
_REASONS = {"stop": "STOP", "tool_call": "STOP", "length": "MAX_TOKENS", "unknown": "OTHER"}


def gemini_usage_json(usage: Usage | None) -> JSONDict | None:
    """The ``usageMetadata`` of ``usage`` (the raw one kept when it is Gemini's)."""
    if usage is None:
        return None
    raw = usage.provider if isinstance(usage.provider, dict) else {}
    native = any(k in raw for k in ("promptTokenCount", "candidatesTokenCount",
                                    "totalTokenCount"))
    out: JSONDict = dict(raw) if native else {}
    now = gemini_usage(out)
    if now.prompt_tokens != usage.prompt_tokens and usage.prompt_tokens is not None:
        out["promptTokenCount"] = usage.prompt_tokens - (out.get("toolUsePromptTokenCount") or 0)
    if now.thoughts_tokens != usage.thoughts_tokens and usage.thoughts_tokens is not None:
        out["thoughtsTokenCount"] = usage.thoughts_tokens
    if now.response_tokens != usage.response_tokens and usage.response_tokens is not None:
        # response_tokens counts the thoughts too; never a negative count
        out["candidatesTokenCount"] = max(
            0, usage.response_tokens - (out.get("thoughtsTokenCount") or 0))
    if now.cached_tokens != usage.cached_tokens and usage.cached_tokens is not None:
        out["cachedContentTokenCount"] = usage.cached_tokens
    if out and not native:
        out["totalTokenCount"] = (usage.prompt_tokens or 0) + (usage.response_tokens or 0)
    return out or None


def _signature(fidelity: JSONDict | None) -> str | None:
    if not fidelity:
        return None
    google = (fidelity.get("extra_content") or {}).get("google") \
        if isinstance(fidelity.get("extra_content"), dict) else None
    sig = fidelity.get("thought_signature") or fidelity.get("signature") or (
        google.get("thought_signature") if isinstance(google, dict) else None)
    return sig if isinstance(sig, str) and sig else None


def is_base64(value: str) -> bool:
    """True when ``value`` is base64 (either alphabet, padding optional, canonical trailing
    bits): what google-genai accepts as a ``thoughtSignature``."""
    text = value.rstrip("=")
    alt = b"-_" if "-" in text or "_" in text else None
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=alt, validate=True)
    except ValueError:
        return False
    again = base64.b64encode(raw, altchars=alt).decode().rstrip("=")
    return again == text


class GeminiEncoder(Encoder):
    """Sans-IO encoder of the Gemini ``alt=sse`` stream (see module doc)."""

    name: ClassVar[str] = "gemini"
    carries_choices: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._calls = 0
        self._cand: int | None = None
        self._envelope: JSONDict = {}

    def start(self, event: UniEvent) -> bytes:
        meta = self.meta
        if meta.get("model"):
            self._envelope["modelVersion"] = meta["model"]
        if meta.get("id"):
            self._envelope["responseId"] = meta["id"]
        return b""

    def _chunk(self, parts: list[JSONDict], candidate: int = 0, **more: Any) -> bytes:
        cand: JSONDict = {"content": {"role": "model", "parts": parts}} if parts else {}
        cand.update(more)
        cand["index"] = candidate
        return sse({"candidates": [cand], **self._envelope})

    def encode_event(self, event: UniEvent) -> bytes:
        if event.event_type == "stop":
            return self._stop(event)
        item = event.content_items[0]
        provider = item.provider or {}
        done = item.type.endswith(".done")
        if self._cand is None:  # the first fragment of a group says its candidate
            self._cand = slot_index(provider, "candidate_index", "choice_index")
        cand: int = self._cand
        if done:
            self._cand = None
        part: JSONDict = {k: v for k, v in provider.items()
                          if k not in _RIDING and k not in _PART_CONTENT}
        more: JSONDict = {}
        fidelity = item.fidelity
        if isinstance(item, (TextItem, ThinkingItem)):
            if done:
                return b""
            if isinstance(item, ThinkingItem):
                part.update(text=item.thinking, thought=True)
            else:
                part["text"] = item.text
            if provider.get("citations"):
                more["citationMetadata"] = {"citationSources": provider["citations"]}
            if provider.get("logprobs"):
                more["logprobsResult"] = provider["logprobs"][-1]
        elif not done:
            return b""  # calls and binary parts go out whole at .done
        elif isinstance(item, ToolCallItem):
            self._calls += 1
            call: JSONDict = {"name": item.name, "args": item.arguments}
            if not provider.get("synthetic_id") and item.tool_call_id:
                call["id"] = item.tool_call_id
            part = {"functionCall": call}
        elif isinstance(item, InlineDataItem):
            part["inlineData"] = {"mimeType": item.mime_type,
                                  "data": base64.b64encode(item.data).decode("ascii")}
        elif isinstance(item, InlineThinkingItem):
            if not item.data:
                return b""
            part = {"text": "", "thought": True}
            fidelity = {"thought_signature": item.data.decode()}
        else:
            return b""
        sig = _signature(fidelity)
        if sig:  # google-genai rejects a signature that is no base64: that one rides aside
            part["thoughtSignature" if is_base64(sig) else "streamflowSignature"] = sig
        if not (part.get("text") or len(part) > 1 or more or "functionCall" in part
                or "inlineData" in part):
            return b""  # an empty fragment carries nothing
        return self._chunk([part], cand, **more)

    def _stop(self, event: UniEvent) -> bytes:
        meta = self.meta
        out = b""
        for kept in meta.get("extra_parts") or ():
            if (isinstance(kept, dict) and isinstance(kept.get("part"), dict)
                    and _MAPPED.isdisjoint(kept["part"])):
                out += self._chunk([kept["part"]], slot_index(kept, "candidate_index"))
        calls = self._calls
        reason = native_reason(
            meta.get("finish_reason"), event.finish_reason,
            lambda r: ("tool_call" if calls else "stop") if r == "STOP"
            else "length" if r == "MAX_TOKENS" else "unknown",
            _REASONS.get(event.finish_reason or "unknown", "STOP"))
        for other in meta.get("candidates") or ():
            if isinstance(other, dict):
                rest = {k: v for k, v in other.items()
                        if k not in ("index", "finish_reason", "content")}
                out += self._chunk([], slot_index(other, "index"),
                                   finishReason=other.get("finish_reason") or "STOP", **rest)
        kept = meta.get("candidate")
        candidate: JSONDict = ({k: v for k, v in kept.items() if k != "content"}
                               if isinstance(kept, dict) else {})
        last: JSONDict = {"candidates": [{**candidate, "finishReason": reason, "index": 0}]}
        usage = gemini_usage_json(event.usage_metadata)
        if usage is not None:
            last["usageMetadata"] = usage
        if isinstance(meta.get("prompt_feedback"), dict):
            last["promptFeedback"] = meta["prompt_feedback"]
        last.update((k, v) for k, v in meta.items()
                    if k not in _OWN_META and k not in _RESERVED and v is not None)
        last.update(self._envelope)
        return out + sse(last)

    def encode_error(self, error: StreamflowError) -> bytes:
        body = getattr(error, "body", None)
        if (isinstance(body, dict) and body.keys() == {"error"} and isinstance(body["error"], dict)
                and isinstance(body["error"].get("status"), str)):
            return sse(body)  # Gemini's own error object, as it came
        etype, message, code = error_fields(error)
        known = _STATUS.get(etype)
        status = etype if etype.isupper() else known[1] if known else "INTERNAL"
        number = code if isinstance(code, int) else known[0] if known else 500
        return sse({"error": {"code": number, "message": message, "status": status}})
