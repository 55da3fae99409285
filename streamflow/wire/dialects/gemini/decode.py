"""Dialect ``gemini``: Gemini ``streamGenerateContent?alt=sse`` (data-only SSE, often CRLF).

Every event is a whole ``GenerateContentResponse``; its parts map onto UniEvent:

* ``text`` parts -> ``text``; ``thought: true`` parts -> ``thinking``. Consecutive
  parts of one kind (across events) form one group.
* ``thoughtSignature`` is never thinking: it rides as
  ``fidelity={"thought_signature": ...}`` on the fragment of the part that carried
  it -- thinking, text (Gemini 3 often sends it on an empty text part), a function
  call or inline data; a part holding only a signature is an empty fragment of that
  kind. A second signature in an open group starts a new group, so each stays
  where it arrived.
* ``functionCall`` parts arrive whole: one ``tool_call`` group each (parallel calls
  are successive groups). When ``id`` is missing one is made up from the
  ``responseId``, the candidate and the call's position
  (``call_<responseId>_<candidate>_<n>``) and marked ``provider={"synthetic_id": True}``.
  Streamed arguments (``partialArgs`` + ``willContinue``) become JSON text
  fragments (see :mod:`streamflow.wire.dialects.gemini._args`); other parts arriving while
  such a call streams are held until it ends. A continuation chunk's differing
  ``name``/``id``/``args`` and a second signature on one call are kept in the
  fragment's ``provider`` (``thought_signatures``).
* ``inlineData`` -> ``inline_data`` (base64 decoded, ``mime_type`` kept): each image
  is its own group, consecutive ``audio/*`` chunks of one type form one group.
* Any other part (``executableCode``, ``codeExecutionResult``, ``fileData``...) is
  kept whole in the message ``provider["extra_parts"]`` with ``item_index`` (its
  position among the items) and ``candidate_index``. ``citationMetadata`` sources
  and ``logprobsResult`` ride on an empty ``text.delta`` (``provider={"citations"|
  "logprobs": [...]}``); other candidate fields (``safetyRatings``,
  ``groundingMetadata``, ``finishMessage``...) keep their last value in the stop
  event's ``provider["candidate"]``.
* ``usageMetadata`` is cumulative: the last one is read. ``prompt_tokens`` is
  ``promptTokenCount`` (+ ``toolUsePromptTokenCount``); ``response_tokens`` is
  ``candidatesTokenCount + thoughtsTokenCount`` (all output, as OpenAI and
  Anthropic count it); ``thoughts_tokens`` and ``cached_tokens``
  (``cachedContentTokenCount``) as sent; raw in ``usage_metadata.provider``.
* ``finishReason``: ``STOP`` -> ``stop`` (``tool_call`` when the candidate called a
  function), ``MAX_TOKENS`` -> ``length``, anything else (``SAFETY``,
  ``RECITATION``, ``MALFORMED_FUNCTION_CALL``...) -> ``unknown``; the raw value is in
  the stop event's ``provider["finish_reason"]``. There is no terminator event and
  usage may follow the finish reason, so stop is emitted when the body ends; a body
  that ends with no ``finishReason`` at all raises ``IncompleteStreamError``.
* An in-band ``{"error": {...}}`` raises ``ProviderError`` (``code``, ``status`` as
  ``type``). A ``promptFeedback.blockReason`` (the prompt was refused, no candidate
  will come) raises ``ProviderError`` with ``type="prompt_blocked"`` and the reason as
  ``code``: the request failed, and it must not read as a cut (retryable) stream.
* Several candidates: candidate 0 streams live, the others are held and emitted
  after it, before stop, each group's first fragment (and so its ``.done``) marked
  ``provider={"candidate_index": i}``; their raw finish reasons and fields are in the
  stop event's ``provider["candidates"]``, every candidate's UniEvent finish reason in
  its ``provider["choice_finish_reasons"]`` (by index), so ``Message.choices`` keeps
  them apart.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....core.errors import IncompleteStreamError, ProtocolError, ProviderError
from ....core.events import (
    ContentItem,
    FinishReason,
    InlineDataItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    Usage,
)
from ...framing.sse import ServerSentEvent
from .._readers import (
    b64_field,
    error_code,
    error_text,
    expect_obj,
    expect_str,
    opt_list,
    token_count,
)
from ..base import Decoder, load_json
from . import wire
from ._calls import CallsMixin
from ._candidate import Candidate
from .wire import parse_event

__all__ = ["GeminiDecoder", "gemini_usage", "parse_event"]

_PART_KEYS = frozenset({"text", "thought", "thoughtSignature", "functionCall", "inlineData"})
_RESPONSE_KEYS = frozenset({"candidates", "usageMetadata", "promptFeedback", "responseId",
                            "modelVersion"})


def gemini_usage(raw: JSONDict) -> Usage:
    """Map a ``usageMetadata`` object onto :class:`Usage` (see module doc; raw kept)."""
    prompt, tool = token_count(raw, "promptTokenCount"), token_count(raw, "toolUsePromptTokenCount")
    out, thoughts = token_count(raw, "candidatesTokenCount"), token_count(raw, "thoughtsTokenCount")
    return Usage(
        cached_tokens=token_count(raw, "cachedContentTokenCount"),
        prompt_tokens=None if prompt is None and tool is None else (prompt or 0) + (tool or 0),
        thoughts_tokens=thoughts,
        response_tokens=None if out is None and thoughts is None else (out or 0) + (thoughts or 0),
        provider=raw)


class GeminiDecoder(CallsMixin, Decoder[ServerSentEvent]):
    """Sans-IO decoder of the Gemini ``streamGenerateContent`` SSE stream (see module doc)."""

    name: ClassVar[str] = "gemini"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "a finishReason"
    provider_name: ClassVar[str] = "gcp.gemini"
    is_terminator = staticmethod(wire.is_terminator)
    error_frame = staticmethod(wire.error_frame)
    http_error = staticmethod(wire.http_error)
    parse_wire = staticmethod(parse_event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cands: dict[int, Candidate] = {}
        self._usage = Usage()
        self._rid = ""

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A data-only JSON object with ``candidates``/``usageMetadata``/``promptFeedback``,
        or an error object with a string ``status`` (Google's error shape)."""
        if getattr(frame, "event", "message") != "message":
            return False
        try:
            ev = load_json(getattr(frame, "data", ""))
        except ProtocolError:
            return False
        if type(ev) is not dict or "choices" in ev or "type" in ev or "object" in ev:
            return False
        if type(ev.get("error")) is dict:
            return type(ev["error"].get("status")) is str
        return any(key in ev for key in ("candidates", "usageMetadata", "promptFeedback"))

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one whole response chunk."""
        ev = expect_obj(load_json(frame.data, "gemini event"), "gemini event")
        if "error" in ev:
            err = expect_obj(ev["error"], "gemini error")
            raise ProviderError(str(err.get("message") or "gemini stream error"),
                                code=error_code(err.get("code")),
                                type=error_text(err.get("status")), body=ev)
        em = self.emitter
        rid = ev.get("responseId")
        meta = {k: v for k, v in ev.items() if k not in _RESPONSE_KEYS}
        if rid is not None:
            self._rid = meta["id"] = expect_str(rid, "responseId")
        if ev.get("modelVersion") is not None:
            meta["model"] = expect_str(ev["modelVersion"], "modelVersion")
        em.note(meta)
        feedback = ev.get("promptFeedback")
        if feedback is not None:
            feedback = expect_obj(feedback, "gemini promptFeedback")
            reason = feedback.get("blockReason")
            if reason:
                raise ProviderError(
                    str(feedback.get("blockReasonMessage") or f"prompt blocked: {reason}"),
                    code=error_code(reason), type="prompt_blocked", body=ev)
            em.note({"prompt_feedback": feedback})
        if ev.get("usageMetadata") is not None:
            self._usage = gemini_usage(expect_obj(ev["usageMetadata"], "gemini usageMetadata"))
            em.counted(self._usage)  # cumulative: a cut keeps the counts so far
        for pos, cand in enumerate(opt_list(ev.get("candidates"), "gemini candidates")):
            self._candidate(pos, expect_obj(cand, "gemini candidate"))

    def _candidate(self, pos: int, cand: JSONDict) -> None:
        given = cand.get("index")
        index = given if isinstance(given, int) and not isinstance(given, bool) else pos
        c = self._cands.get(index)
        if c is None:
            c = self._cands[index] = Candidate(index, self.emitter if index == 0 else None,
                                                self.limits)
        content = cand.get("content")
        if content is not None:
            parts = expect_obj(content, "gemini content").get("parts")
            for part in opt_list(parts, "gemini content.parts"):
                self._part(c, expect_obj(part, "gemini part"))
        for key, value in cand.items():
            if key in ("content", "index") or value is None:
                continue
            if key == "finishReason":
                c.finish = expect_str(value, "finishReason")
            elif key == "citationMetadata":
                meta = expect_obj(value, f"gemini {key}")  # the Gemini API and the Vertex spelling
                sources = opt_list(meta.get("citationSources", meta.get("citations")),
                                   "gemini citationMetadata citations")
                self._ride(c, key, "citations", value, list(sources))
            elif key == "logprobsResult":
                self._ride(c, key, "logprobs", value, [value])
            else:
                c.meta[key] = value

    @staticmethod
    def _ride(c: Candidate, key: str, name: str, value: Any, values: list[Any]) -> None:
        """Per-chunk text metadata: on the open text group, else kept on the candidate."""
        if c.open == "text":
            c.put(TextItem("text.delta", "", None, {name: values}))
        else:
            c.meta.setdefault(key, []).append(value)

    def _part(self, c: Candidate, part: JSONDict) -> None:
        sig = part.get("thoughtSignature")
        fid = {"thought_signature": expect_str(sig, "thoughtSignature")} if sig else None
        extras = {k: v for k, v in part.items() if k not in _PART_KEYS} or None
        if "functionCall" in part:
            call = expect_obj(part["functionCall"], "gemini functionCall")
            self._call(c, call, fid, extras, part)
        elif c.writer is not None:
            c.after.append(part)
        elif "inlineData" in part:
            blob = expect_obj(part["inlineData"], "gemini inlineData")
            mime = expect_str(blob.get("mimeType"), "inlineData.mimeType")
            joined = (c.open == "inline_data" and mime == c.mime and mime.startswith("audio/")
                      and not (fid and c.sig))
            data = b64_field(blob.get("data"), "gemini inlineData.data", urlsafe=True)
            c.put(InlineDataItem("inline_data.delta", data, mime, fid, extras), new=not joined)
            c.mime = mime
        elif "text" in part or (fid and part.keys() <= {"thought", "thoughtSignature"}):
            text = expect_str(part.get("text"), "text")
            kind = "thinking" if part.get("thought") is True else "text"
            if not (text or fid or extras) and c.open == kind:
                return
            item: ContentItem = (
                ThinkingItem("thinking.delta", text, fid, extras) if kind == "thinking"
                else TextItem("text.delta", text, fid, extras))
            c.put(item, new=bool(fid) and c.open == kind and c.sig)
        else:
            self._keep(c, part)

    def finish(self) -> None:
        """End of body: stop (candidate 0 first, then the held ones), or incomplete."""
        if not any(c.finish for c in self._cands.values()):
            raise IncompleteStreamError("gemini stream ended without a finishReason")
        em = self.emitter
        for index in sorted(self._cands):
            c = self._cands[index]
            c.close()  # a call still streaming is cut: its arguments fail to parse here
            c.writer = None
            after, c.after = c.after, []
            for part in after:
                self._part(c, part)
            c.close()
            if c.em is None:
                em.close_group()
                for held in c.held:
                    em.close_group() if held is None else em.delta(held)
        first = self._cands.get(0)
        raw = first.finish if first is not None else None
        finish = _finish(first)
        provider: JSONDict = {"finish_reason": raw}
        if first is not None and first.meta:
            provider["candidate"] = first.meta
        others = [{"index": c.index, "finish_reason": c.finish, **c.meta}
                  for i, c in sorted(self._cands.items()) if i != 0]
        reasons: dict[str, FinishReason] | None = None
        if others:
            provider["candidates"] = others
            reasons = {str(i): _finish(c) for i, c in sorted(self._cands.items())}
            reasons["0"] = finish
        em.stop(self._usage, finish, provider, reasons)


def _finish(c: Candidate | None) -> FinishReason:
    """A candidate's finish reason (``STOP`` after a function call is ``tool_call``)."""
    raw = c.finish if c is not None else None
    if raw == "STOP":
        return "tool_call" if c is not None and c.calls else "stop"
    if raw == "MAX_TOKENS":
        return "length"
    return "unknown"
