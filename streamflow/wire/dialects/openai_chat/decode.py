"""Dialect ``openai-chat``: OpenAI-compatible ``chat.completion.chunk`` SSE streams.

OpenAI, OpenRouter, DeepSeek, GLM, xAI and other compatible servers. Each ``data:``
payload is a chunk; ``data: [DONE]`` ends the stream. Mapping onto UniEvent:

* ``content`` -> ``text``; ``refusal`` -> a ``text`` group of its own whose items
  carry ``provider={"refusal": True}``. Content sent as a list of parts (Mistral)
  maps ``text`` parts to text and ``thinking`` parts to thinking.
* Reasoning: ONE representation is displayed, never two. ``reasoning`` (OpenRouter)
  or else ``reasoning_content`` (DeepSeek) is the ``thinking`` text. A chunk with
  neither displays the text/summary of its ``reasoning_details`` instead.
  ``reasoning_details`` entries are kept for the next turn: entries sharing
  ``index`` and ``type`` are merged (text/summary concatenated, a later non-empty
  ``signature`` wins) and, when the thinking group ends, one ``thinking.delta``
  with ``thinking=""`` carries ``fidelity={"reasoning_details": [...], "signature":
  <last non-empty signature, when any>}`` (an empty thinking group is opened when
  details arrived without text). ``reasoning.encrypted`` entries become one
  ``inline_thinking`` group each: ``data`` is the opaque string's UTF-8 bytes and
  ``fidelity`` the entry without ``data`` (send back ``{**fidelity, "data":
  data.decode()}``).
* ``tool_calls`` fragments are keyed by ``index`` and may interleave; they are
  de-interleaved into groups in call order (see
  :mod:`streamflow.wire.dialects.openai_chat._calls`). Legacy ``function_call`` is a
  call at index -1 with ``provider={"legacy_function_call": True}``. Content of
  another kind arriving while calls stream ends them first (their arguments must
  be complete by then, else ``ToolCallArgumentParseError``).
* ``annotations`` (citations) and per-chunk ``logprobs.content`` ride on the text
  fragment's ``provider`` (``{"annotations": [...]}``, ``{"logprobs": [...]}``);
  lists concatenate on the ``.done`` item. Refusal logprobs ride on refusal text.
* ``audio`` chunks -> one ``inline_data`` group (base64 decoded; MIME from
  ``format``, ``audio/pcm`` when absent, as OpenAI streams pcm16); each fragment's
  ``provider`` has its ``transcript`` fragment, the ``.done`` the whole transcript;
  the audio ``id`` is ``fidelity={"audio_id": ...}``. Every ``images`` entry
  (``data:`` URL decoded; another URL kept as ``provider["url"]``) and every
  ``artifacts`` entry is an ``inline_data`` group of its own.
* Several choices (``n > 1``): choice 0 streams live; the other choices are mapped
  into buffers and their groups emitted after choice 0's, before the stop event,
  each item's ``provider`` carrying ``{"choice_index": i}``; their raw finish reasons
  and extras are in the stop event's ``provider["choices"]``, every choice's
  UniEvent finish reason in its ``provider["choice_finish_reasons"]`` (by index), so
  ``Message.choices`` keeps them apart.
* ``finish_reason``: ``stop`` -> ``stop`` (``tool_call`` when the message has tool
  calls: some servers say ``stop``), ``length`` -> ``length``, ``tool_calls`` /
  ``function_call`` -> ``tool_call``, anything else (``content_filter``,
  ``error``...) or none -> ``unknown``. The finish chunk closes the open groups;
  the stop event is emitted at ``[DONE]`` (the usage chunk comes after the finish
  chunk). The raw value and other choice fields (``native_finish_reason``...) are
  in the stop event's ``provider``.
* Usage: the last non-null ``usage`` of any chunk (OpenAI: ``choices: []``;
  OpenRouter: a chunk with an empty delta; DeepSeek: the finish chunk).
  ``prompt_tokens``, ``completion_tokens`` -> ``response_tokens``,
  ``prompt_tokens_details.cached_tokens`` (DeepSeek ``prompt_cache_hit_tokens``)
  -> ``cached_tokens``, ``completion_tokens_details.reasoning_tokens`` ->
  ``thoughts_tokens``, ``cost`` -> ``cost``; the raw object is ``Usage.provider``.
* Chunk fields other than ``choices``/``usage``/``error``/``object`` (``id``,
  ``model``, ``created``, ``system_fingerprint``, ``service_tier``, OpenRouter's
  ``provider``...) are message metadata (``note``). Unknown delta fields are kept
  in the message ``provider["unknown_delta_fields"]`` (other choices: in their
  entry of the stop event's ``provider["choices"]``).
* A top-level ``error`` (with or without choices, with any ``finish_reason``) raises
  :class:`ProviderError` (``code``; ``type`` = ``error.metadata.error_type``, else
  ``error.type``, else a string ``code``; ``body`` = the whole chunk, usage
  included) after the chunk's content was taken. A stream without ``[DONE]``
  raises :class:`IncompleteStreamError`, even after a finish chunk. The partial
  message of every error includes buffered tool calls, the other choices' items
  and the usage, when a usage chunk came. Empty ``data:`` events are ignored, a
  repeated ``[DONE]`` too; a chunk after ``[DONE]`` is a :class:`ProtocolError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mypy_extensions import mypyc_attr
from pydantic import BaseModel
from pydantic_core import from_json

from ....core.errors import IncompleteStreamError, ProtocolError, StreamflowError
from ....core.events import FinishReason, JSONDict
from ....core.limits import Limits
from ....core.message import Message
from ...framing.sse import ServerSentEvent
from .._readers import wrong
from ..base import Decoder, Emitter, ErrorFields, load_frame
from . import wire
from ._choice import ChoiceMapper
from ._chunk_fields import FINISH_REASONS, MESSAGE_KEYS, NOT_META, openai_usage, provider_error
from .wire import parse_event

__all__ = ["FINISH_REASONS", "OpenAIChatDecoder", "openai_usage", "parse_event"]


@mypyc_attr(allow_interpreted_subclasses=True)  # an OpenAI-compatible dialect subclasses it
class OpenAIChatDecoder(Decoder[ServerSentEvent]):
    """Sans-IO decoder of OpenAI-compatible chat completion chunks (see module doc)."""

    name: ClassVar[str] = "openai-chat"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "data: [DONE]"
    provider_name: ClassVar[str] = "openai"
    # real classmethods, not staticmethod(...) attributes: mypyc cannot compile those
    @classmethod
    def is_terminator(cls, frame: Any) -> bool:
        return wire.is_terminator(frame)

    @classmethod
    def error_frame(cls, code: int, type: str | None, message: str) -> bytes | None:
        return wire.error_frame(code, type, message)

    @classmethod
    def http_error(cls, payload: Any, headers: Mapping[str, str]) -> ErrorFields:
        return wire.http_error(payload, headers)

    @staticmethod
    def parse_wire(data: str | bytes) -> BaseModel:
        """Validate one payload into its typed wire model (for the ``decode`` operator)."""
        return parse_event(data)

    def __init__(self, *, limits: Limits | None = None, clock: Any = None) -> None:
        super().__init__(limits=limits, clock=clock)
        self._first = ChoiceMapper(self.emitter, 0)
        self._others: dict[int, ChoiceMapper] = {}
        self._meta: JSONDict = {}
        self._usage: JSONDict | None = None
        self._envelope: JSONDict | None = None
        self._ride: JSONDict | None = None
        self._done = False

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A JSON object with ``"object": "chat.completion.chunk"`` or a ``choices`` list."""
        data = getattr(frame, "data", None)
        if type(data) is not str or not data.lstrip().startswith("{"):
            return False
        try:
            obj = from_json(data)
        except ValueError:
            return False
        if type(obj) is not dict:
            return False
        if obj.get("object") == "chat.completion.chunk":
            return True
        return type(obj.get("choices")) is list and "type" not in obj

    @property
    def partial(self) -> Message:
        """The message so far, with buffered tool calls and other choices' items appended."""
        msg = self.emitter.message
        if self._done:
            return msg
        msg.items += self._first.pending_items()
        for index in sorted(self._others):
            other = self._others[index]
            msg.items += other.em.message.items + other.pending_items()
        if self._usage is not None and msg.usage_metadata is None:
            try:
                msg.usage_metadata = openai_usage(self._usage).so_far()
            except ProtocolError:  # raised at [DONE]; a partial message always builds
                pass
        return msg

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one ``data:`` payload (a chunk or ``[DONE]``)."""
        try:
            if self._done or not frame.raw.startswith(b"{"):
                stripped = frame.data.strip()
                if self._done:
                    if stripped in ("[DONE]", ""):
                        return
                    raise ProtocolError("openai-chat chunk after data: [DONE]", raw=frame.data)
                if stripped.startswith("[DONE]"):
                    self._end()
                    return
                if not stripped:
                    return
            chunk = load_frame(frame, "openai-chat chunk")
            if type(chunk) is not dict:
                raise ProtocolError("openai-chat chunk is not a JSON object", raw=frame.data)
            error = chunk.get("error")
            if error is None:
                # the envelope (id, model, created...) rarely changes: when the chunk
                # without its choices equals the previous one, nothing new is noted
                choices = chunk.pop("choices", None)
                if chunk != self._envelope:
                    self._note_meta(chunk)
                    self._envelope = chunk
            else:  # the error's body is the chunk as it came
                choices = chunk.get("choices")
                self._note_meta(chunk)
                self._envelope = None
            if choices:
                if type(choices) is not list:
                    raise wrong("chunk choices", "a list", choices)
                for ch in choices:
                    if type(ch) is not dict:
                        raise wrong("a chunk choice", "a JSON object", ch)
                    index = ch.get("index", 0)
                    if type(index) is not int:
                        raise wrong("choice index", "an integer", index)
                    mapper = self._first if index == 0 else self._other(index)
                    mapper.choice(ch, error is None)
            if self._ride is not None:
                ride, self._ride = self._ride, None
                self.emitter.ride(ride)
            usage = chunk.get("usage")
            if usage is not None:
                if type(usage) is not dict:
                    raise wrong("chunk usage", "a JSON object", usage)
                self._usage = usage
            if error is not None:
                raise provider_error(error, chunk)
        except StreamflowError as exc:
            exc.attach(self.partial)
            raise

    def finish(self) -> None:
        """End of input: without ``[DONE]`` the stream is incomplete -- except in a JSON-lines
        recording (one payload per line, where ``[DONE]`` cannot appear), which is complete
        once the finish chunk came."""
        if not self._done and self.framed_as == "ndjson" and self._first.finish_reason:
            self._end()
        if not self._done:
            raise IncompleteStreamError("openai-chat stream ended without data: [DONE]")

    # -- chunks ---------------------------------------------------------------
    def _note_meta(self, chunk: JSONDict) -> None:
        meta = self._meta
        changed: JSONDict | None = None
        for key, value in chunk.items():
            if key in NOT_META or value is None or meta.get(key) == value:
                continue
            meta[key] = value
            if changed is None:
                changed = {}
            changed[key] = value
        if changed:
            self.emitter.note(changed)
            ride = {k: v for k, v in changed.items() if k not in MESSAGE_KEYS}
            if ride:
                self._ride = ride

    def _other(self, index: int) -> ChoiceMapper:
        mapper = self._others.get(index)
        if mapper is None:
            mapper = self._others[index] = ChoiceMapper(Emitter(self.limits), index)
        mapper.em.now = self.emitter.now
        return mapper

    def _end(self) -> None:
        """``[DONE]``: close everything, replay other choices, emit the stop event."""
        first = self._first
        em = self.emitter
        if first.finish_reason == "length":
            em.ending(openai_usage(self._usage) if self._usage is not None else None, "length")
        first.settle()
        provider: JSONDict = {"finish_reason": first.finish_reason, **first.extras}
        finish = _finish(first)
        others = []
        reasons: dict[str, FinishReason] = {"0": finish}
        for index in sorted(self._others):
            other = self._others[index]
            other.settle()
            for event in other.em.drain():
                item = event.content_items[0]
                if item.type.endswith(".done"):
                    em.close_group()
                else:
                    em.delta(item)
            others.append({"index": index, "finish_reason": other.finish_reason,
                           **other.extras})
            reasons[str(index)] = _finish(other)
        if others:
            provider["choices"] = others
        self._done = True
        usage = openai_usage(self._usage) if self._usage is not None else None
        em.stop(usage, finish, provider, reasons if others else None)


def _finish(choice: ChoiceMapper) -> FinishReason:
    """A choice's finish reason (``stop`` with tool calls is ``tool_call``)."""
    finish: FinishReason = FINISH_REASONS.get(choice.finish_reason or "", "unknown")
    if finish == "stop" and choice.calls.count:
        finish = "tool_call"
    return finish
