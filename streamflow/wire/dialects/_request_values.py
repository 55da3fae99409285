"""Helpers the request sides share: checked field access and argument/image conversions.

Every refusal names the field and shows the value it got (``tool_choice must be an
object, not 'bogus'``), so a client can tell what to change. The readers of objects,
lists and integers (``obj``, ``obj_list``, ``opt_int``) are the dialects' checked readers
(:mod:`streamflow.wire.dialects._readers`), re-exported here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ...core.errors import ProtocolError, RequestError
from ...core.events import InlineDataItem, JSONDict, ThinkingItem, ToolCallItem
from ...core.requests import ChatRequest, Part, Turn
from ._readers import b64_field, obj_list, shown  # noqa: F401 (obj_list: for request.py)
from ._readers import expect_obj as obj
from ._readers import opt_index as opt_int  # noqa: F401 (for request.py)
from .request_base import MAX_MODELS


def need(body: Mapping[str, Any], key: str, what: str) -> Any:
    """``body[key]`` (``RequestError`` when missing)."""
    if key not in body:
        raise RequestError(f"{what} needs {key!r}")
    return body[key]


def opt_float(value: Any, what: str) -> float | None:
    """``None`` or a number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(f"{what} must be a number, not {shown(value)}")
    return float(value)


def opt_bool(value: Any, what: str) -> bool | None:
    """``None`` or a boolean."""
    if value is None or isinstance(value, bool):
        return value
    raise RequestError(f"{what} must be true or false, not {shown(value)}")


def opt_str(value: Any, what: str) -> str | None:
    """``None`` or a string."""
    if value is None or isinstance(value, str):
        return value
    raise RequestError(f"{what} must be a string, not {shown(value)}")


def stop_list(value: Any) -> list[str]:
    """Stop sequences from a string, a list or ``None``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise RequestError(
        f"stop sequences must be a string or a list of strings, not {shown(value)}")


def text_of(value: Any, what: str) -> str:
    """Text content given as a string or as a list of ``{"text": ...}`` parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(obj(p, what).get("text") or "") for p in value)
    raise RequestError(f"{what} must be a string or a list of text parts, not {shown(value)}")


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
            raise RequestError(f"{what} arguments are not JSON: {value[:80]!r}") from None
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


def json_format(value: Any, what: str) -> JSONDict | None:
    """A neutral ``response_format`` from OpenAI's shapes (chat's ``json_schema`` nested,
    Responses' ``text.format`` flat); ``None`` for ``None``."""
    if value is None:
        return None
    value = obj(value, what)
    kind = value.get("type")
    if kind in ("text", "json_object"):
        return {"type": kind}
    if kind != "json_schema":
        raise RequestError(f"{what}.type must be 'text', 'json_object' or 'json_schema', "
                            f"not {shown(kind)}")
    spec = obj(value["json_schema"], f"{what}.json_schema") if "json_schema" in value \
        else value
    out: JSONDict = {"type": "json_schema", "name": str(need(spec, "name", what)),
                     "schema": obj(spec.get("schema") or {}, f"{what} schema")}
    for key in ("strict", "description"):
        if spec.get(key) is not None:
            out[key] = spec[key]
    return out


MODEL_TEXT = 256
"""The longest id or name a model list entry is read with (a longer id: the entry is left out)."""


def model_entries(body: Any, key: str, what: str) -> list[dict[str, Any]]:
    """The objects of the list ``body[key]`` of a model list, at most
    :data:`~streamflow.wire.dialects.request_base.MAX_MODELS`; an entry of another kind is
    left out, a body that is no object or a ``key`` that is no list is a ``ProtocolError``
    (the upstream's answer broke its dialect)."""
    if not isinstance(body, dict):
        raise ProtocolError(f"{what} must be an object, not {shown(body)}")
    entries = body.get(key)
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ProtocolError(f"{what}: {key} must be a list, not {shown(entries)}")
    return [entry for entry in entries if type(entry) is dict][:MAX_MODELS]


def model_text(value: Any) -> str | None:
    """A model list's string of at most :data:`MODEL_TEXT` characters, else ``None``."""
    return value if isinstance(value, str) and 0 < len(value) <= MODEL_TEXT else None


def model_count(value: Any) -> int | None:
    """A model list's non-negative integer (a time, a token count), else ``None``."""
    return value if type(value) is int and value >= 0 else None
