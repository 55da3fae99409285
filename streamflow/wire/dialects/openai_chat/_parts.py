"""Pieces of an OpenAI-compatible chat delta that need more than a field read.

Base64 and ``data:`` URLs (audio chunks, images, artifacts), the merging of
``reasoning_details`` fragments, and the state of a streaming audio item. Used by
:mod:`streamflow.wire.dialects.openai_chat._choice`; every malformed value is a
:class:`RequestError`.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import unquote_to_bytes

from ....core.errors import RequestError
from ....core.events import InlineDataItem, JSONDict
from .._readers import b64_field, expect_str, wrong
from ..base import merge_provider

AUDIO_MIME: Final = {"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac",
                     "opus": "audio/opus", "aac": "audio/aac", "pcm16": "audio/pcm",
                     "pcm": "audio/pcm"}
_GROWING_DETAIL: Final = ("text", "summary", "data")
_MISSING: Final = object()


def parse_data_url(url: str) -> tuple[bytes, str] | None:
    """``(bytes, mime_type)`` of a ``data:`` URL; ``None`` for any other URL."""
    if not url.startswith("data:"):
        return None
    header, sep, payload = url[5:].partition(",")
    if not sep:
        raise RequestError("malformed data: URL (no comma)")
    mime = header.split(";", 1)[0]
    if header.endswith(";base64"):
        return b64_field(payload, "image data URL"), mime
    return unquote_to_bytes(payload), mime


def image_item(image: Any, tag: JSONDict | None) -> InlineDataItem:
    """One ``delta.images`` entry as an ``inline_data.delta`` (another URL: ``provider["url"]``)."""
    if type(image) is not dict:
        raise wrong("a delta.images entry", "a JSON object", image)
    url_obj = image.get("image_url")
    url = expect_str(url_obj.get("url") if type(url_obj) is dict else url_obj, "image_url.url")
    parsed = parse_data_url(url)
    provider = {k: v for k, v in image.items() if k != "image_url" and v is not None}
    if parsed is None:
        parsed = (b"", "")
        provider["url"] = url
    return InlineDataItem("inline_data.delta", parsed[0], parsed[1], None,
                          merge_provider(provider or None, tag))


def artifact_item(artifact: Any, tag: JSONDict | None) -> InlineDataItem:
    """One ``delta.artifacts`` entry as an ``inline_data.delta`` (``provider["artifact"]``)."""
    if type(artifact) is not dict:
        raise wrong("a delta.artifacts entry", "a JSON object", artifact)
    data = b64_field(artifact.get("data"), "artifact data")
    mime = expect_str(artifact.get("media_type"), "artifact media_type")
    kept = {k: v for k, v in artifact.items() if k not in ("data", "media_type")}
    return InlineDataItem("inline_data.delta", data, mime, None,
                          merge_provider({"artifact": kept}, tag))


class DetailMerger:
    """A ``reasoning_details`` entry merged from fragments sharing ``index`` and type.

    ``text``/``summary``/``data`` strings concatenate (in a list, joined once);
    other keys take the later value unless it is ``None`` or ``""`` (so a signature
    sent after the text replaces the empty one sent first).
    """

    __slots__ = ("entry", "parts")

    def __init__(self, entry: JSONDict) -> None:
        self.entry = dict(entry)
        self.parts: dict[str, list[str]] = {}
        for key in _GROWING_DETAIL:
            value = entry.get(key)
            if type(value) is str:
                self.parts[key] = [value]

    def merge(self, entry: JSONDict) -> None:
        """Add a later fragment of the same entry."""
        parts = self.parts
        mine = self.entry
        for key, value in entry.items():
            if key in parts and type(value) is str:
                parts[key].append(value)
            elif mine.get(key, _MISSING) is value:
                continue  # the very same object (JSON strings are cached): nothing changes
            elif value not in (None, "") or key not in mine:
                mine[key] = value
                if type(value) is str and key in _GROWING_DETAIL:
                    parts[key] = [value]

    def whole(self) -> JSONDict:
        """The merged entry, as it is sent back on the next turn."""
        out = dict(self.entry)
        for key, parts in self.parts.items():
            out[key] = "".join(parts)
        return out


class AudioState:
    """The audio item being streamed: its MIME type, id and transcript so far."""

    __slots__ = ("audio_id", "mime", "transcript")

    def __init__(self, mime: str) -> None:
        self.mime = mime
        self.audio_id: Any = None
        self.transcript: list[str] = []
