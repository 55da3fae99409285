"""Helpers the request formats share: checked field access and argument/image conversions.

The readers of objects, lists and integers (``obj``, ``obj_list``, ``opt_int``) are the
dialects' checked readers (:mod:`streamflow.dialects.wire_values`), re-exported here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ...dialects.wire_values import b64_field, obj_list
from ...dialects.wire_values import expect_obj as obj
from ...dialects.wire_values import opt_index as opt_int
from ...errors import ProtocolError
from ...events import InlineDataItem, JSONDict, ThinkingItem, ToolCallItem
from ..request import ChatRequest, Part, Turn

__all__ = ["add_parts", "arguments_object", "arguments_text", "image_item", "image_data_url",
           "need", "obj", "obj_list", "opt_float", "opt_int", "signature_of", "stop_list",
           "text_of"]


def need(body: Mapping[str, Any], key: str, what: str) -> Any:
    """``body[key]`` (``ProtocolError`` when missing)."""
    if key not in body:
        raise ProtocolError(f"{what} needs {key!r}")
    return body[key]


def opt_float(value: Any, what: str) -> float | None:
    """``None`` or a number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtocolError(f"{what} must be a number")
    return float(value)


def stop_list(value: Any) -> list[str]:
    """Stop sequences from a string, a list or ``None``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ProtocolError("stop sequences must be a string or a list of strings")


def text_of(value: Any, what: str) -> str:
    """Text content given as a string or as a list of ``{"text": ...}`` parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(obj(p, what).get("text") or "") for p in value)
    raise ProtocolError(f"{what} must be a string or a list of text parts")


def arguments_text(call: ToolCallItem) -> str:
    """A call's arguments as JSON object text (``"{}"``, never ``""``, for no arguments)."""
    args = call.arguments
    if isinstance(args, str):
        return args if args.strip() else "{}"
    return json.dumps(args, ensure_ascii=False)


def arguments_object(value: Any, what: str) -> JSONDict:
    """Arguments given as JSON text (``""`` is ``{}``) or an object, as an object."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ProtocolError(f"{what} arguments are not JSON: {value[:80]!r}") from None
    return obj(value, f"{what} arguments")


def signature_of(item: ThinkingItem, native: str) -> str | None:
    """A thinking item's signature: the ``native`` fidelity key, else the generic ``signature``."""
    fidelity = item.fidelity or {}
    value = fidelity.get(native) or fidelity.get("signature")
    return value if isinstance(value, str) and value else None


def image_item(url: str, mime: str = "") -> InlineDataItem:
    """An image part from a ``data:`` URL (decoded) or another URL (kept as ``provider["url"]``)."""
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        raw = b64_field(data, "image data URL")
        return InlineDataItem("inline_data.done", raw, head[5:] or mime)
    return InlineDataItem("inline_data.done", b"", mime, provider={"url": url})


def image_data_url(item: InlineDataItem) -> str:
    """An image part as a URL: its own URL, or a ``data:`` URL of its bytes."""
    url = (item.provider or {}).get("url")
    if url:
        return str(url)
    return f"data:{item.mime_type};base64,{base64.b64encode(item.data).decode('ascii')}"


def add_parts(request: ChatRequest, role: str, parts: list[Part]) -> None:
    """Append ``parts`` to the last turn when it has ``role``, else as a new turn."""
    turns = request.turns
    if turns and turns[-1].role == role:
        turns[-1].parts += parts
    else:
        turns.append(Turn(role, parts))  # type: ignore[arg-type]
