"""The tails of an OpenAI-compatible chat choice: reasoning details and audio.

``reasoning_details`` entries and a streaming ``audio`` item are held across chunks
and emitted as one closing fragment (the merged details as the thinking group's
``fidelity``, the whole transcript on the audio group) when their group ends: when
a fragment of another kind arrives (:meth:`TailsMixin._enter`) or the choice
settles (:meth:`TailsMixin._flush`). Encrypted reasoning is a group of its own.
"""

from __future__ import annotations

from typing import Any

from ....core.events import InlineDataItem, InlineThinkingItem, JSONDict
from .._readers import b64_field, expect_list, expect_str, hashable, wrong
from ..base import Emitter, merge_provider
from ._calls import ToolCalls
from ._parts import AUDIO_MIME, AudioState, DetailMerger


class TailsMixin:
    """Reasoning details, audio and the group boundaries that flush them (for ChoiceMapper)."""

    __slots__ = ("_audio", "_detail_at", "_details")  # set by ChoiceMapper.__init__

    em: Emitter
    tag: JSONDict | None
    calls: ToolCalls
    _details: list[DetailMerger]
    _detail_at: dict[tuple[Any, Any], DetailMerger]
    _audio: AudioState | None

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
