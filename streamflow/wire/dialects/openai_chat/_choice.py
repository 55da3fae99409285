"""One choice of an OpenAI-compatible chat stream, mapped onto an :class:`Emitter`.

:class:`ChoiceMapper` reads a choice's ``delta``, ``logprobs`` and
``finish_reason`` chunk after chunk (the mapping is described in
:mod:`streamflow.wire.dialects.openai_chat.decode`). Choice 0 writes to the decoder's
emitter live; the other choices write to emitters of their own that the decoder
replays before the stop event.

The tails of a choice -- ``reasoning_details`` entries and a streaming ``audio`` item --
are held across chunks and emitted as one closing fragment (the merged details as the
thinking group's ``fidelity``, the whole transcript on the audio group) when their group
ends: when a fragment of another kind arrives (:meth:`ChoiceMapper._enter`) or the
choice settles (:meth:`ChoiceMapper._flush`). Encrypted reasoning is a group of its own.
"""

from __future__ import annotations

from typing import Any, Final

from ....core.events import (
    ContentItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
)
from .._readers import b64_field, expect_list, expect_str, hashable, wrong
from ..base import Emitter, merge_provider
from ._calls import ToolCalls
from ._parts import AUDIO_MIME, AudioState, DetailMerger, artifact_item, image_item

_DELTA_KEYS: Final = frozenset({"role", "content", "refusal", "reasoning", "reasoning_content",
                                "reasoning_details", "tool_calls", "function_call", "annotations",
                                "images", "audio", "artifacts"})
_PLAIN: Final = frozenset({"role", "content", "refusal", "reasoning", "reasoning_content",
                           "reasoning_details"})
_CHOICE_KEYS: Final = frozenset({"index", "delta", "finish_reason", "logprobs"})
_EMPTY: Final[tuple[Any, ...]] = (None, "", [], {})


class ChoiceMapper:
    """Maps one choice's chunks onto ``em``; ``tag`` rides on every item's ``provider``."""

    __slots__ = ("_audio", "_detail_at", "_details", "_text_mode", "_unknown", "calls", "em",
                 "extras", "finish_reason", "tag")

    def __init__(self, em: Emitter, index: int = 0) -> None:
        self.em = em
        self.tag: JSONDict | None = {"choice_index": index} if index else None
        self.calls = ToolCalls(em, self._flush, self.tag)
        self.finish_reason: str | None = None
        self.extras: JSONDict = {}
        self._details: list[DetailMerger] = []
        self._detail_at: dict[tuple[Any, Any], DetailMerger] = {}
        self._text_mode: str | None = None
        self._audio: AudioState | None = None
        self._unknown: list[JSONDict] = []

    # -- entry points ---------------------------------------------------------
    def choice(self, ch: JSONDict, finish: bool = True) -> None:
        """Take one chunk's entry for this choice (``finish=False``: ignore finish_reason)."""
        delta = ch.get("delta")
        logprobs = ch.get("logprobs")
        if delta:
            if type(delta) is not dict:
                raise wrong("choice delta", "a JSON object", delta)
            if logprobs or not self._fast(delta):
                self._delta(delta, logprobs)
        elif logprobs:
            self._delta({}, logprobs)
        if not _CHOICE_KEYS.issuperset(ch):
            for key, value in ch.items():
                if key not in _CHOICE_KEYS and value is not None:
                    self.extras[key] = value
        reason = ch.get("finish_reason")
        if reason is not None and finish:
            self.finish_reason = expect_str(reason, "finish_reason")
            if self.finish_reason != "length":
                self.settle()  # cut by length: settled at the end, once usage is known

    def settle(self) -> None:
        """Close everything open: calls, the audio and reasoning tails, the open group."""
        self.calls.settle()
        self._flush()
        self.em.close_group()

    def pending_items(self) -> list[ContentItem]:
        """Buffered calls not emitted yet, as unfinished items (for a partial message)."""
        return list(self.calls.pending_items())

    # -- the delta ------------------------------------------------------------
    def _delta(self, delta: JSONDict, logprobs: Any) -> None:
        get = delta.get
        if not _DELTA_KEYS.issuperset(delta):
            self._unknown_fields(delta)
        role = get("role")
        if role is not None and role != "assistant":
            self._keep({"delta_role": role})
        text = get("reasoning")
        if not text:
            text = get("reasoning_content")
        if type(text) is not str:  # read per chunk: the reader is called only when it must
            text = expect_str(text, "delta.reasoning")
        if text:
            self._enter("thinking")
            self.em.thinking(text, None, self.tag)
        details = get("reasoning_details")
        if details:
            self._reasoning_details(details, show=not text)
        self._text_parts(get("content"), get("refusal"), logprobs, get("annotations"))
        audio = get("audio")
        if audio:
            self._audio_chunk(audio)
        images = get("images")
        if images:
            for image in expect_list(images, "delta.images"):
                self._one_binary(image_item(image, self.tag))
        artifacts = get("artifacts")
        if artifacts:
            for artifact in expect_list(artifacts, "delta.artifacts"):
                self._one_binary(artifact_item(artifact, self.tag))
        calls = get("tool_calls")
        if calls:
            if type(calls) is not list:
                raise wrong("delta.tool_calls", "a list", calls)
            for position, raw in enumerate(calls):
                self.calls.fragment(raw, position)
        legacy = get("function_call")
        if legacy:
            if type(legacy) is not dict:
                raise wrong("delta.function_call", "a JSON object", legacy)
            marker = None if self.calls.known(-1) else {"legacy_function_call": True}
            self.calls.add(-1, "", expect_str(legacy.get("name"), "function_call.name"),
                           expect_str(legacy.get("arguments"), "function_call.arguments"), marker)

    def _fast(self, delta: JSONDict) -> bool:
        """The per-token fast paths, for the common shapes of a delta without logprobs.

        Arguments for a call already open; more text for the open content group;
        reasoning (with at most one non-encrypted ``reasoning_details`` entry) while
        no call or audio is open. True when done; False, having done nothing, for
        any other shape, which :meth:`_delta` then maps.
        """
        get = delta.get
        calls = get("tool_calls")
        if calls is not None:
            return (len(delta) == 1 and type(calls) is list and len(calls) == 1
                    and self.calls.arguments_fragment(calls[0]))
        if not _PLAIN.issuperset(delta) or get("refusal"):
            return False
        role = get("role")
        if role is not None and role != "assistant":
            return False
        content = get("content")
        text = get("reasoning") or get("reasoning_content")
        details = get("reasoning_details")
        em = self.em
        if content:
            if (type(content) is not str or text or details or em.open_kind != "text"
                    or self._text_mode != "content" or self._details):
                return False
            em.delta(TextItem("text.delta", content, None,
                              merge_provider(None, self.tag) if self.tag else None))
            return True
        if not text or type(text) is not str or self._audio is not None or self.calls.active:
            return False
        if not details:
            em.delta(ThinkingItem("thinking.delta", text, None, self.tag))
            return True
        if type(details) is not list or len(details) != 1:
            return False
        entry = details[0]
        if type(entry) is not dict:
            return False
        kind = entry.get("type")
        if kind == "reasoning.encrypted":
            return False
        em.delta(ThinkingItem("thinking.delta", text, None, self.tag))
        self._detail(entry, kind)  # the text is shown: the entry is kept for the next turn
        return True

    def _text_parts(self, content: Any, refusal: Any, logprobs: Any, annotations: Any) -> None:
        lp_content = lp_refusal = None
        if logprobs:
            if type(logprobs) is not dict:
                raise wrong("choice logprobs", "a JSON object", logprobs)
            lp_content = logprobs.get("content")
            lp_refusal = logprobs.get("refusal")
        provider: JSONDict | None = None
        if lp_content:
            provider = {"logprobs": expect_list(lp_content, "logprobs.content")}
        if annotations:
            provider = {**(provider or {}), "annotations": expect_list(annotations, "annotations")}
        if type(content) is list:
            self._content_list(content, provider)
        elif content or provider:
            self._text(expect_str(content, "delta.content"), "content", provider)
        if refusal or lp_refusal:
            extra = ({"logprobs": expect_list(lp_refusal, "logprobs.refusal")}
                     if lp_refusal else None)
            self._text(expect_str(refusal, "delta.refusal"), "refusal", extra)

    def _content_list(self, parts: list[Any], provider: JSONDict | None) -> None:
        """Content as a list of parts (Mistral): text and thinking parts, others kept."""
        for part in parts:
            if type(part) is not dict:
                raise wrong("a content part", "a JSON object", part)
            kind = part.get("type")
            if kind == "text":
                self._text(expect_str(part.get("text"), "content part text"), "content", provider)
                provider = None
            elif kind == "thinking":
                inner = part.get("thinking")
                pieces = inner if type(inner) is list else [{"text": inner}]
                self._enter("thinking")
                for piece in pieces:
                    text = piece.get("text") if type(piece) is dict else piece
                    self.em.thinking(expect_str(text, "thinking part"), None, self.tag)
            else:
                self._text("", "content", {**(provider or {}), "content_parts": [part]})
                provider = None
        if provider:
            self._text("", "content", provider)

    def _text(self, text: str, mode: str, provider: JSONDict | None) -> None:
        self._enter("text")
        em = self.em
        if em.open_kind == "text" and self._text_mode != mode:
            em.close_group()
        self._text_mode = mode
        if mode == "refusal":
            provider = {**(provider or {}), "refusal": True}
        em.text(text, merge_provider(provider, self.tag))

    def _one_binary(self, item: InlineDataItem) -> None:
        """Every image or file is a group of its own."""
        self._enter("inline_data:one")
        em = self.em
        em.close_group()
        em.delta(item)
        em.close_group()

    def _unknown_fields(self, delta: JSONDict) -> None:
        extra = {k: v for k, v in delta.items() if k not in _DELTA_KEYS and v not in _EMPTY}
        if extra:
            self._unknown.append(extra)
            if len(self._unknown) == 1:  # kept by reference: appending stays O(1) per chunk
                self._keep({"unknown_delta_fields": self._unknown})

    def _keep(self, extra: JSONDict) -> None:
        """Message-level data: the message provider (choice 0) or this choice's extras."""
        if self.tag is None:
            self.em.note(extra)
        else:
            self.extras.update(extra)

    # -- reasoning details ----------------------------------------------------
    def _reasoning_details(self, details: Any, show: bool) -> None:
        for entry in expect_list(details, "reasoning_details"):
            if type(entry) is not dict:
                raise wrong("a reasoning_details entry", "a JSON object", entry)
            kind = entry.get("type")
            if kind == "reasoning.encrypted":
                self._encrypted(entry)
                continue
            if show:  # no `reasoning` string in this chunk: display the detail's text
                shown = entry.get("text") if kind == "reasoning.text" else entry.get("summary")
                if shown:
                    self._enter("thinking")
                    self.em.thinking(expect_str(shown, f"{kind}.text"), None, self.tag)
            self._detail(entry, kind)

    def _detail(self, entry: JSONDict, kind: Any) -> None:
        """Keep a ``reasoning_details`` entry, merged with the earlier fragments of it."""
        key = (hashable(entry.get("index"), "reasoning_details index"),
               hashable(kind, "reasoning_details type"))
        held = self._detail_at.get(key) if key[0] is not None else None
        if held is None:
            held = DetailMerger(entry)
            self._details.append(held)
            if key[0] is not None:
                self._detail_at[key] = held
        else:
            held.merge(entry)

    def _encrypted(self, entry: JSONDict) -> None:
        data = expect_str(entry.get("data"), "reasoning.encrypted data")
        self._enter("inline_thinking")
        em = self.em
        em.close_group()
        meta = {k: v for k, v in entry.items() if k != "data"}
        em.delta(InlineThinkingItem("inline_thinking.delta", data.encode(), meta,
                                    merge_provider({"detail_type": "reasoning.encrypted"},
                                                   self.tag)))
        em.close_group()

    def _flush_details(self) -> None:
        details = [d.whole() for d in self._details]
        self._details = []
        self._detail_at = {}
        fidelity: JSONDict = {"reasoning_details": details}
        for entry in details:
            if entry.get("signature"):
                fidelity["signature"] = entry["signature"]
        self.em.thinking("", fidelity, self.tag)

    # -- audio and group boundaries -------------------------------------------
    def _audio_chunk(self, audio: Any) -> None:
        if type(audio) is not dict:
            raise wrong("delta.audio", "a JSON object", audio)
        data = b64_field(audio.get("data"), "audio data") if audio.get("data") else b""
        transcript = expect_str(audio.get("transcript"), "audio transcript")
        self._enter("inline_data")
        state = self._audio
        if state is None or self.em.open_kind != "inline_data":
            fmt = expect_str(audio.get("format"), "audio format")
            mime = AUDIO_MIME.get(fmt, f"audio/{fmt}" if fmt else "audio/pcm")
            state = self._audio = AudioState(mime)
            self.em.close_group()
        fidelity = None
        audio_id = audio.get("id")
        if audio_id and audio_id != state.audio_id:
            state.audio_id = audio_id
            fidelity = {"audio_id": audio_id}
        if transcript:
            state.transcript.append(transcript)
        provider = {k: v for k, v in audio.items()
                    if k not in ("data", "id", "format") and v is not None} or None
        self.em.delta(InlineDataItem("inline_data.delta", data, state.mime, fidelity,
                                     merge_provider(provider, self.tag)))

    def _enter(self, kind: str) -> None:
        """Before a fragment of ``kind``: end the tool calls and emit what must precede it."""
        if kind != "tool_call" and self.calls.active:
            self.calls.settle()
        if self._audio is not None and kind != "inline_data":
            self._flush_audio()
        if self._details and kind != "thinking":
            self._flush_details()

    def _flush(self) -> None:
        """Emit the tails that must close their group: the transcript, reasoning details."""
        if self._audio is not None:
            self._flush_audio()
        if self._details:
            self._flush_details()

    def _flush_audio(self) -> None:
        state = self._audio
        assert state is not None
        self._audio = None
        if state.transcript and self.em.open_kind == "inline_data":
            whole = {"transcript": "".join(state.transcript)}
            self.em.delta(InlineDataItem("inline_data.delta", b"", state.mime, None,
                                         merge_provider(whole, self.tag)))
