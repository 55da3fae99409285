"""Encoder ``openai-responses``: UniEvents as the Responses API's named event sequence.

``response.created`` / ``response.in_progress`` open the body; every event carries
its ``sequence_number``, and item events their ``output_index``, ``item_id`` and
``content_index``/``summary_index``. Groups map onto output items
(:class:`~streamflow.wire.dialects.openai_responses._output.OutputWriter`): text groups
-> parts of a ``message`` item (consecutive groups of one ``item_id`` share it;
refusals are ``refusal`` parts; annotations and logprobs ride back), thinking ->
summary (or ``reasoning_text``) parts of a ``reasoning`` item that the following
``inline_thinking`` closes with its ``encrypted_content`` (a lone thinking
signature from another dialect is the ``encrypted_content``), tool calls ->
``function_call`` items (``"{}"`` for a call without arguments; ``custom_tool_call``
when marked ``custom``), images -> ``image_generation_call``.

The terminal event is ``response.completed`` (``response.incomplete`` with
``max_output_tokens`` for ``length``, ``content_filter`` for ``unknown``) with the
usage and, as the API sends it and the SDK's ``get_final_response()`` reads it,
the whole ``output`` (``completed_output=False`` leaves it empty: then the finished
items are not kept). :meth:`fail` writes ``event: error`` with the flat ``code``/
``message`` and a nested ``error`` object, so the official SDK raises, then
``response.failed`` with the response so far.
"""

from __future__ import annotations

from typing import ClassVar

from ....core.errors import StreamflowError
from ....core.events import JSONDict, UniEvent, Usage
from ..encoder import Encoder, error_fields, new_id, unix_seconds
from ._output import OutputWriter
from .decode import _LIFECYCLE, _ROUTED, _TERMINAL, responses_usage

__all__ = ["OpenAIResponsesEncoder", "responses_usage_json"]

_OWN_META = frozenset({"id", "model", "extra_items", "unknown_events", "output", "usage",
                       "status", "incomplete_details", "error"})
# the event types the SDK and the decoder act on: never written from another stream's data
_OWN_EVENTS = frozenset({"error", *_LIFECYCLE, *_TERMINAL, *("response." + k for k in _ROUTED)})
# item types the decoder maps onto content: never written from a kept slot (another
# dialect's provider data would show as text or calls the upstream never sent)
_CONTENT_ITEMS = frozenset({"message", "reasoning", "function_call", "custom_tool_call",
                            "image_generation_call"})


def responses_usage_json(usage: Usage | None) -> JSONDict | None:
    """The Responses ``usage`` object of ``usage`` (the raw one kept when it is one)."""
    if usage is None:
        return None
    raw = usage.provider if isinstance(usage.provider, dict) else {}
    native = "input_tokens" in raw and "total_tokens" in raw
    out: JSONDict = dict(raw) if native else {}
    now = responses_usage(out)
    if now.prompt_tokens != usage.prompt_tokens and usage.prompt_tokens is not None:
        out["input_tokens"] = usage.prompt_tokens
    if now.cached_tokens != usage.cached_tokens and usage.cached_tokens is not None:
        out["input_tokens_details"] = {**(out.get("input_tokens_details") or {}),
                                       "cached_tokens": usage.cached_tokens}
    if now.response_tokens != usage.response_tokens and usage.response_tokens is not None:
        out["output_tokens"] = usage.response_tokens
    if now.thoughts_tokens != usage.thoughts_tokens and usage.thoughts_tokens is not None:
        out["output_tokens_details"] = {**(out.get("output_tokens_details") or {}),
                                        "reasoning_tokens": usage.thoughts_tokens}
    if out and "total_tokens" not in out:
        out["total_tokens"] = (out.get("input_tokens") or 0) + (out.get("output_tokens") or 0)
    return out or None


class OpenAIResponsesEncoder(Encoder):
    """Sans-IO encoder of the OpenAI Responses stream (see module doc)."""

    name: ClassVar[str] = "openai-responses"

    def __init__(self, completed_output: bool = True) -> None:
        super().__init__()
        self.out = OutputWriter(keep=completed_output)
        self._response: JSONDict = {}

    def start(self, event: UniEvent) -> bytes:
        meta = self.meta
        self._response = {"id": meta.get("id") or new_id("resp_"), "object": "response",
                          "created_at": unix_seconds(event.created_at), "status": "in_progress",
                          "model": meta.get("model") or "", "output": [], "usage": None}
        return (self.out.event("response.created", response=self._response)
                + self.out.event("response.in_progress", response=self._response))

    def encode_event(self, event: UniEvent) -> bytes:
        if event.event_type == "delta":
            return self.out.item(event.content_items[0])
        out = self.out
        data = out.close()
        meta = self.meta
        for kept in meta.get("extra_items") or ():
            if (isinstance(kept, dict) and isinstance(kept.get("type"), str)
                    and kept["type"] not in _CONTENT_ITEMS and not out.wrote(kept.get("id"))):
                data += out.whole({k: v for k, v in kept.items() if k != "output_index"})
        for unknown in meta.get("unknown_events") or ():
            kind = unknown.get("type") if isinstance(unknown, dict) else None
            if isinstance(kind, str) and kind and kind not in _OWN_EVENTS:
                data += out.raw(unknown)
        response = dict(self._response)
        for late in ("id", "model"):  # llama.cpp names its model only at the end
            if meta.get(late) and not response.get(late):
                response[late] = meta[late]
        if meta.get("object") == "response":  # our own dialect: its fields come back
            response.update((k, v) for k, v in meta.items() if k not in _OWN_META)
        response["output"] = out.output
        response["usage"] = responses_usage_json(event.usage_metadata)
        finish = event.finish_reason
        if finish in ("stop", "tool_call"):
            response["status"] = "completed"
            kind = "response.completed"
        else:
            response["status"] = "incomplete"
            reason = "max_output_tokens" if finish == "length" else "content_filter"
            response["incomplete_details"] = {"reason": reason}
            kind = "response.incomplete"
        return data + out.event(kind, response=response)

    def encode_error(self, error: StreamflowError) -> bytes:
        etype, message, code = error_fields(error)
        code = code if code is not None else etype
        out = self.out.event("error", code=code, message=message, param=None,
                             error={"type": etype, "code": code, "message": message})
        if not self._response:  # failed before any event: the error alone
            return out
        failed = {**self._response, "status": "failed", "output": self.out.output,
                  "error": {"code": code, "message": message}}
        return out + self.out.event("response.failed", response=failed)
