"""An MCP ``CallToolResult`` as the value a streamflow tool returns.

The result goes back to the model as the server gave it: ``structuredContent`` as the
JSON value; text blocks as text; images and audio as a
:class:`~streamflow.app.tools.ToolContent` (the provider sends the image itself where its
API takes images in tool results); an embedded resource as its text (or as data); a
resource link as its URI. A result with ``isError`` raises :class:`MCPToolError`, so
the dispatcher sends the model a tool error (``{"error": "MCPToolError", "message":
<the server's text>}``); an MCP protocol error (unknown tool, a broken connection) is a
tool error too.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic import BaseModel

from ...core._tools._result import ToolContent
from ...core.events import InlineDataItem, TextItem


class MCPToolError(Exception):
    """The server answered the call with ``isError``: the message is its text."""


def _part(block: Any) -> TextItem | InlineDataItem:
    """One MCP content block as a text or data part."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return TextItem("text.done", block.text)
    if kind in ("image", "audio"):
        return InlineDataItem("inline_data.done", base64.b64decode(block.data), block.mime_type)
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return TextItem("text.done", text, provider={"uri": str(resource.uri)})
        return InlineDataItem("inline_data.done", base64.b64decode(resource.blob),
                              resource.mime_type or "", provider={"uri": str(resource.uri)})
    if kind == "resource_link":
        return TextItem("text.done", f"{block.name}: {block.uri}",
                        provider={"uri": str(block.uri)})
    dump = block.model_dump(mode="json") if isinstance(block, BaseModel) else block
    return TextItem("text.done", str(dump))


def result_value(result: Any) -> Any:
    """A ``CallToolResult`` as the value a tool returns (see the module doc).

    Raises :class:`MCPToolError` when the result has ``isError``.
    """
    parts = [_part(b) for b in result.content]
    if result.is_error:
        text = "\n".join(p.text for p in parts if isinstance(p, TextItem))
        raise MCPToolError(text or "the tool failed")
    media = any(isinstance(p, InlineDataItem) for p in parts)
    if media:
        return ToolContent(tuple(parts), result.structured_content)
    if result.structured_content is not None:
        return result.structured_content
    texts = [p.text for p in parts if isinstance(p, TextItem)]
    return texts[0] if len(texts) == 1 else "\n".join(texts)
