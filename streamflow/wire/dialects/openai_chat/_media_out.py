"""Binary output of a chat completion chunk (for the encoder): audio, images, artifacts.

:func:`media_delta` is the ``delta`` of one ``inline_data`` item, as OpenAI-compatible
servers send it: ``audio/*`` -> ``delta.audio`` (``data`` base64, ``id`` from
``fidelity["audio_id"]``, ``transcript`` and the other audio fields from ``provider``,
``format`` unless PCM); an item kept as an artifact -> ``delta.artifacts``; anything
else -> ``delta.images`` with a data URL (or the item's own ``url`` when it has no bytes).
"""

from __future__ import annotations

import base64

from ....core.events import InlineDataItem, JSONDict

_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3", "audio/flac": "flac",
            "audio/opus": "opus", "audio/aac": "aac", "audio/pcm": "pcm16"}


def media_delta(item: InlineDataItem) -> JSONDict:
    """The chunk ``delta`` that carries ``item`` (see the module doc)."""
    data = base64.b64encode(item.data).decode("ascii")
    provider = item.provider or {}
    if item.mime_type.startswith("audio/"):
        audio: JSONDict = {k: v for k, v in provider.items()
                           if k not in ("transcript", "choice_index", "url")}
        audio["data"] = data
        if item.fidelity and item.fidelity.get("audio_id"):
            audio["id"] = item.fidelity["audio_id"]
        if provider.get("transcript"):
            audio["transcript"] = provider["transcript"]
        fmt = _FORMATS.get(item.mime_type, item.mime_type.partition("/")[2])
        if fmt != "pcm16":
            audio["format"] = fmt
        return {"audio": audio}
    if isinstance(provider.get("artifact"), dict):
        return {"artifacts": [{**provider["artifact"], "data": data,
                               "media_type": item.mime_type}]}
    url = provider.get("url") if not item.data else None
    image: JSONDict = {"type": "image_url"}
    image.update((k, v) for k, v in provider.items() if k not in ("url", "choice_index"))
    image["image_url"] = {"url": url or f"data:{item.mime_type};base64,{data}"}
    return {"images": [image]}
