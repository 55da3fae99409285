"""Encoder ``openai-chat``: UniEvents as ``chat.completion.chunk`` SSE, ending ``[DONE]``.

* ``text`` -> ``delta.content`` (``provider["refusal"]`` -> ``delta.refusal``;
  ``provider["logprobs"]`` -> the choice's ``logprobs``; ``annotations`` ride along).
* ``thinking`` -> the chosen flavour's field: ``reasoning`` (OpenRouter, the default)
  or ``reasoning_content`` (``reasoning="reasoning_content"``, DeepSeek/GLM). The
  group's ``fidelity`` goes out as ``reasoning_details`` together with the group's
  last text fragment (one fragment of lookahead, so the entries are kept, not shown
  twice): the entries themselves when the source had them, else one
  ``reasoning.text`` entry carrying the ``signature`` (or Gemini's
  ``thought_signature``).
* ``tool_call`` -> ``delta.tool_calls`` keyed by ``index``, one index per call (never
  merged); the first fragment has ``id``, ``type`` and ``name``. A call whose
  arguments were all empty gets ``"{}"``, never ``""``. ``fidelity`` goes out as the
  call's ``extra_content`` (Gemini thought signatures as Google's compatible API
  sends them).
* ``inline_thinking`` -> one ``reasoning.encrypted`` entry (``fidelity`` + ``data``);
  ``inline_data`` -> ``delta.audio`` for ``audio/*``, else a ``delta.images`` data URL
  (:mod:`~streamflow.wire.dialects.openai_chat._media_out`).
* Items tagged ``provider["choice_index"]`` go to that choice (``n > 1``).
* Stop: a finish chunk per choice, then the usage chunk (``choices: []``) carrying
  the message-level provider fields (``system_fingerprint``, ``created``...), then
  ``data: [DONE]``; ``include_usage=False`` leaves the usage chunk out (a client that
  did not ask for ``stream_options.include_usage``). :meth:`fail` writes the in-band
  error chunk (top-level ``error``, ``finish_reason: "error"``) and ``[DONE]``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....core.errors import StreamflowError
from ....core.events import (
    ContentItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
)
from .._frames_out import json_bytes, sse, sse_data
from ..encoder import Encoder, error_fields, native_reason, new_id, slot_index, unix_seconds
from ._fields_out import extra_content_of, openai_usage_json, reasoning_details_of
from ._media_out import media_delta
from .decode import FINISH_REASONS

__all__ = ["OpenAIChatEncoder", "openai_usage_json"]

_REASONS = {"stop": "stop", "length": "length", "tool_call": "tool_calls",
            "unknown": "content_filter"}
_OWN_META = frozenset({"id", "model", "finish_reason", "choices", "object",
                       "unknown_delta_fields"})
_DONE = sse_data(b"[DONE]")
_RESERVED = frozenset({"error", "usage", "choices"})  # never from another dialect's slots


class OpenAIChatEncoder(Encoder):
    """Sans-IO encoder of OpenAI-compatible chat completion chunks (see module doc)."""

    name: ClassVar[str] = "openai-chat"
    carries_choices: ClassVar[bool] = True

    def __init__(self, reasoning: str = "reasoning", include_usage: bool = True) -> None:
        super().__init__()
        self.include_usage = include_usage
        if reasoning not in ("reasoning", "reasoning_content"):
            raise TypeError("reasoning must be 'reasoning' or 'reasoning_content'")
        self.reasoning = reasoning
        self._head: JSONDict = {}
        self._prefix: bytes | None = None
        self._calls: dict[int, int] = {}     # choice -> tool calls so far
        self._args = False                   # the open call wrote arguments
        self._call_open = False
        self._held: ThinkingItem | None = None
        self._held_choice = 0
        self._detail = 0                     # the next free reasoning_details index
        self._choices: set[int] = {0}
        self._choice: int | None = None     # the open group's choice
        self._refusal = False                # the open text group is a refusal

    def start(self, event: UniEvent) -> bytes:
        meta = self.meta
        self._head = {"id": meta.get("id") or new_id("chatcmpl-"),
                      "object": "chat.completion.chunk",
                      "created": meta.get("created") or unix_seconds(event.created_at),
                      "model": meta.get("model") or ""}
        # the first chunk says who speaks, as OpenAI sends it (the SDK's final message reads it)
        return sse({**self._head, "choices": [
            {"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})

    def _chunk(self, choice: int, delta: JSONDict, finish: str | None = None,
               **more: Any) -> bytes:
        if not (choice or finish or more):  # the per-token path: the envelope is cached
            if self._prefix is None:
                head = json_bytes({**self._head, "choices": [{"index": 0, "delta": None}]})
                self._prefix = b"data: " + head[:-len(b"null}]}")]
            return self._prefix + json_bytes(delta) + b',"finish_reason":null}]}\n\n'
        entry: JSONDict = {"index": choice, "delta": delta, "finish_reason": finish}
        entry.update(more)
        return sse({**self._head, "choices": [entry]})

    def encode_event(self, event: UniEvent) -> bytes:
        if event.event_type == "stop":
            return self._flush() + self._stop(event)
        item = event.content_items[0]
        provider = item.provider or {}
        if self._choice is None:  # the first fragment of a group says its choice
            self._choice = slot_index(provider, "choice_index", "candidate_index")
            self._choices.add(self._choice)
            self._refusal = bool(provider.get("refusal"))
        choice: int = self._choice
        if item.type.endswith(".done"):
            self._choice = None
        if isinstance(item, ThinkingItem):
            return self._thinking(item, choice)
        out = self._flush()
        if item.type.endswith(".done"):
            if isinstance(item, ToolCallItem):
                out += self._call_done(item, choice)
            elif isinstance(item, (InlineThinkingItem, InlineDataItem)):
                out += self._whole(item, choice)
            return out
        if isinstance(item, TextItem):
            return out + self._text(item, provider, choice)
        if isinstance(item, ToolCallItem):
            return out + self._call(item, choice)
        return out  # inline data / inline thinking: written whole at .done

    # -- content --------------------------------------------------------------
    def _text(self, item: TextItem, provider: JSONDict, choice: int) -> bytes:
        field = "refusal" if self._refusal else "content"
        delta: JSONDict = {field: item.text}
        more: JSONDict = {}
        if provider.get("annotations"):
            delta["annotations"] = provider["annotations"]
        if provider.get("logprobs"):
            more["logprobs"] = {field: provider["logprobs"]}
        if not item.text and len(delta) == 1 and not more:
            return b""
        return self._chunk(choice, delta, **more)

    def _thinking(self, item: ThinkingItem, choice: int) -> bytes:
        if item.type.endswith(".done"):
            return self._flush()
        held = self._held
        if item.fidelity:
            details = self._indexed(reasoning_details_of(item.fidelity))
            text = held.thinking if held is not None else ""
            self._held = None
            delta: JSONDict = {self.reasoning: text + item.thinking}
            if details is not None:
                delta["reasoning_details"] = details
            return self._chunk(choice, delta)
        if not item.thinking:
            return b""
        self._held, self._held_choice = item, choice
        return self._chunk_of(held) if held is not None else b""

    def _flush(self) -> bytes:
        """Write the held thinking fragment, if any."""
        held, self._held = self._held, None
        return self._chunk_of(held) if held is not None else b""

    def _indexed(self, details: list[Any] | None) -> list[Any] | None:
        """Entries with an ``index`` each (the SDK merges list deltas by it, and raises
        without one): a missing index is the next free one."""
        if details is None:
            return None
        out = []
        for entry in details:
            if isinstance(entry, dict):
                if type(entry.get("index")) is not int:
                    entry = {**entry, "index": self._detail}
                self._detail = max(self._detail, entry["index"] + 1)
            out.append(entry)
        return out

    def _chunk_of(self, held: ThinkingItem) -> bytes:
        return self._chunk(self._held_choice, {self.reasoning: held.thinking})

    def _call(self, item: ToolCallItem, choice: int) -> bytes:
        index = self._calls.get(choice, 0)
        args = item.arguments if isinstance(item.arguments, str) else ""
        call: JSONDict = {"index": index}
        if not self._call_open:  # the group's first fragment: the call's header
            self._call_open = True
            self._args = bool(args)
            call.update(id=item.tool_call_id or new_id("call_"), type="function",
                        function={"name": item.name, "arguments": args})
        elif not args:
            return b""
        else:
            self._args = True
            call["function"] = {"arguments": args}
        if item.fidelity:
            call["extra_content"] = extra_content_of(item.fidelity)
        return self._chunk(choice, {"tool_calls": [call]})

    def _call_done(self, item: ToolCallItem, choice: int) -> bytes:
        index = self._calls.get(choice, 0)
        self._calls[choice] = index + 1
        self._call_open = False
        if self._args:
            self._args = False
            return b""
        # no argument text at all: "{}", never "" (LiteLLM #5063)
        return self._chunk(choice, {"tool_calls": [{"index": index,
                                                    "function": {"arguments": "{}"}}]})

    def _whole(self, item: ContentItem, choice: int) -> bytes:
        if isinstance(item, InlineThinkingItem):
            entry = {"type": "reasoning.encrypted", **(item.fidelity or {}),
                     "data": item.data.decode()}
            return self._chunk(choice, {"reasoning_details": self._indexed([entry])})
        assert isinstance(item, InlineDataItem)
        return self._chunk(choice, media_delta(item))

    # -- message level --------------------------------------------------------
    def _stop(self, event: UniEvent) -> bytes:
        meta = self.meta
        others: dict[int, JSONDict] = {c["index"]: c for c in meta.get("choices") or ()
                                       if isinstance(c, dict) and type(c.get("index")) is int}
        out = b""
        for choice in sorted(self._choices | set(others)):
            if choice == 0:
                reason = native_reason(
                    meta.get("finish_reason"), event.finish_reason, self._reads_as,
                    _REASONS.get(event.finish_reason or "unknown", "stop"))
                extra: JSONDict = {}
            else:
                entry = others.get(choice) or {}
                reason = entry.get("finish_reason") or "stop"
                extra = {k: v for k, v in entry.items()
                         if k not in ("index", "finish_reason", "delta", "message")}
            out += self._chunk(choice, {}, reason, **extra)
        tail: JSONDict = {k: v for k, v in meta.items()
                          if k not in _OWN_META and k not in _RESERVED and v is not None}
        usage = openai_usage_json(event.usage_metadata) if self.include_usage else None
        if usage is not None or (tail and self.include_usage):
            head = {**self._head, **tail}
            out += sse({**head, "choices": [], "usage": usage})
        return out + _DONE

    def _reads_as(self, raw: str) -> str:
        """The finish reason the openai-chat decoder reads from ``raw`` for this message."""
        if raw == "stop" and self._calls.get(0):
            return "tool_call"
        return FINISH_REASONS.get(raw, "unknown")

    def encode_error(self, error: StreamflowError) -> bytes:
        body = getattr(error, "body", None)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return self._flush() + sse(body) + _DONE
        etype, message, code = error_fields(error)
        head = self._head or {"id": new_id("chatcmpl-"), "object": "chat.completion.chunk"}
        err: JSONDict = {"message": message, "type": etype, "code": code}
        return self._flush() + sse({**head, "choices": [
            {"index": 0, "delta": {}, "finish_reason": "error"}], "error": err}) + _DONE
