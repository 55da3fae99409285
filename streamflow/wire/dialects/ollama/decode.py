"""Dialect ``ollama``: Ollama's ``/api/chat`` and ``/api/generate`` NDJSON streams.

One JSON object per line. Mapping onto UniEvent:

* ``message.thinking`` (``thinking`` on ``/api/generate``) -> ``thinking``;
  ``message.content`` (``response`` on ``/api/generate``) -> ``text``.
* ``message.tool_calls`` arrive whole: each call is one ``tool_call.delta`` carrying
  the name, the id and the whole arguments as JSON text, then its ``tool_call.done``
  with the parsed object. Ollama often sends no id: a stable one is synthesised
  from the call's position, name and arguments (``call_<hash>``), and the item's
  ``provider`` says ``{"synthesized_id": true}``; ``function.index`` and other
  fields are kept in the item's ``provider``.
* The line with ``done: true`` ends the stream: ``done_reason`` ``stop`` ->
  ``stop`` (``tool_call`` when the message has tool calls: Ollama reports ``stop``
  then), ``length`` -> ``length``, anything else -> ``unknown``. Usage:
  ``prompt_eval_count`` -> ``prompt_tokens``, ``eval_count`` -> ``response_tokens``;
  timings (``total_duration``...), ``context`` and the raw ``done_reason`` go to the
  stop event's ``provider``.
* ``{"error": "..."}`` -> :class:`ProviderError`. No ``done: true`` line ->
  :class:`IncompleteStreamError`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ....core.errors import ProtocolError, ProviderError
from ....core.events import FinishReason, JSONDict, Usage
from ...framing.sse import ServerSentEvent
from .._readers import expect_obj, expect_str, opt_list, token_count
from .._wire_base import frame_data, json_line
from ..base import Decoder, load_json

__all__ = ["FINISH_REASONS", "OllamaChunk", "OllamaDecoder", "parse_chunk"]

FINISH_REASONS: dict[str, FinishReason] = {"stop": "stop", "length": "length"}
_MESSAGE_KEYS = ("role", "content", "thinking", "tool_calls")
_LINE_KEYS = ("model", "message", "response", "thinking", "done", "done_reason",
              "prompt_eval_count", "eval_count")


class OllamaChunk(BaseModel):
    """One NDJSON line (typed form, for the ``decode`` operator); extra fields kept."""

    model_config = ConfigDict(extra="allow")
    model: str | None = None
    created_at: str | None = None
    message: dict[str, Any] | None = None
    response: str | None = None
    thinking: str | None = None
    done: bool = False
    done_reason: str | None = None
    prompt_eval_count: int | None = None
    eval_count: int | None = None
    error: str | None = None


def parse_chunk(data: str | bytes) -> BaseModel:
    """Validate one line into :class:`OllamaChunk` (``ValidationError`` if malformed)."""
    return OllamaChunk.model_validate_json(data)


class OllamaDecoder(Decoder[ServerSentEvent]):
    """Sans-IO decoder of Ollama NDJSON chat/generate streams (see module doc)."""

    name: ClassVar[str] = "ollama"
    framing: ClassVar[str] = "ndjson"
    terminator: ClassVar[str] = "a done: true line"
    provider_name: ClassVar[str] = "ollama"

    @classmethod
    def is_terminator(cls, frame: Any) -> bool:
        """A ``done: true`` line ends the stream."""
        obj = frame_data(frame)
        return type(obj) is dict and obj.get("done") is True

    @classmethod
    def error_frame(cls, code: int, type: str | None, message: str) -> bytes:
        """``{"error": "..."}`` on a line of its own."""
        return json_line({"error": message})
    parse_wire = staticmethod(parse_chunk)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._calls = 0
        self._started = False

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """An object with ``model``, ``done`` and ``message`` or ``response``."""
        data = getattr(frame, "data", "")
        if not isinstance(data, str) or '"done"' not in data or '"model"' not in data:
            return False
        try:
            obj = json.loads(data)
        except ValueError:
            return False
        return isinstance(obj, dict) and "done" in obj and ("message" in obj or "response" in obj)

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one line."""
        line = load_json(frame.data, "ollama line")
        if type(line) is not dict:
            raise ProtocolError("ollama line is not a JSON object", raw=frame.data)
        if "error" in line:
            err = line["error"]
            message = err.get("message") if isinstance(err, dict) else err
            raise ProviderError(str(message or "ollama error"), body=line)
        em = self.emitter
        if em.stopped:
            raise ProtocolError("ollama line after done: true", raw=frame.data)
        if not self._started:
            self._started = True
            em.note({k: line[k] for k in ("model", "created_at") if k in line})
        message = line.get("message")
        if message is not None:
            expect_obj(message, "ollama message")
            self._content(message.get("thinking"), message.get("content"))
            for call in opt_list(message.get("tool_calls"), "ollama message.tool_calls"):
                self._tool_call(call)
            extra = {k: v for k, v in message.items() if k not in _MESSAGE_KEYS and v is not None}
            if extra:
                em.note({"message_extra": extra})
        self._content(line.get("thinking"), line.get("response"))
        if line.get("done") is True:
            self._done(line)

    def _content(self, thinking: Any, text: Any) -> None:
        thinking = expect_str(thinking, "thinking")
        text = expect_str(text, "content")
        if thinking:
            self.emitter.thinking(thinking)
        if text:
            self.emitter.text(text)

    def _tool_call(self, call: Any) -> None:
        if type(call) is not dict or type(call.get("function")) is not dict:
            raise ProtocolError(f"ollama tool call is not an object with a function: {call!r}")
        fn = call["function"]
        name = expect_str(fn.get("name"), "tool_calls.function.name")
        args = fn.get("arguments")
        text = args if isinstance(args, str) else json.dumps(
            {} if args is None else args, ensure_ascii=False)
        extra: JSONDict = {k: v for k, v in fn.items() if k not in ("name", "arguments")}
        extra.update({k: v for k, v in call.items() if k not in ("id", "function")})
        call_id = expect_str(call.get("id"), "tool_calls.id")
        if not call_id:
            digest = hashlib.sha256(f"{self._calls}\0{name}\0{text}".encode()).hexdigest()
            call_id = f"call_{digest[:24]}"
            extra["synthesized_id"] = True
        self._calls += 1
        em = self.emitter
        em.tool_call(text, name, call_id, extra or None, new=True)
        em.close_group()

    def _done(self, line: JSONDict) -> None:
        raw = line.get("done_reason")
        finish: FinishReason = FINISH_REASONS.get(expect_str(raw, "done_reason"), "unknown")
        if finish == "stop" and self._calls:
            finish = "tool_call"
        counts: JSONDict = {k: line[k] for k in ("prompt_eval_count", "eval_count") if k in line}
        usage = Usage(prompt_tokens=token_count(counts, "prompt_eval_count"),
                      response_tokens=token_count(counts, "eval_count"), provider=counts or None)
        provider = {k: v for k, v in line.items() if k not in _LINE_KEYS or k == "done_reason"}
        provider.pop("created_at", None)
        if "created_at" in line:
            provider["done_at"] = line["created_at"]
        self.emitter.stop(usage, finish, provider)
