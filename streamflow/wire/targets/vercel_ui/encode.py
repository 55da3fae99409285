"""UniEvents (or a whole Agent run) as the AI SDK UI message stream, for the client's major.

``ai_sdk`` chooses the chunk set, each checked against that package's own schema
(``uiMessageChunkSchema`` of ``ai`` 5, 6 and 7 in ``tests/web``): 7, the current major, by
default. 5 writes only what every v5 client knows; 6 and 7 add an approval request as
``tool-approval-request`` and the run's ``finishReason`` on ``finish`` (v7 reads the same
chunks as v6).

SSE, one ``data: <json>`` chunk per event, ended by ``data: [DONE]``. A run is one
UI message: ``start``, then per turn ``start-step`` .. ``finish-step`` with the
turn's tool results after it, then ``finish``. Groups map to the chunk types::

    text.delta+ text.done            text-start, text-delta*, text-end
    thinking.delta+ thinking.done    reasoning-start, reasoning-delta*, reasoning-end
    tool_call.delta+ tool_call.done  tool-input-start, tool-input-delta*, tool-input-available
    inline_thinking (redacted)       reasoning-start + reasoning-end, the bytes in providerMetadata
    inline_data (image, audio)       file {url: data URL, mediaType}
    embedding                        data-embedding {data: vector}
    ToolResult                       tool-output-available | tool-output-error
    tool progress (Agent runs)       tool-output-available {output: {message, data},
                                     preliminary: true} (the final output replaces it)
    approval request (Agent runs)    ai_sdk=6 and later: tool-approval-request {approvalId};
                                     ai_sdk=5: data-approval-request {toolCallId, toolName,
                                     input} (v5 has no approval chunk)
    StreamflowError                  the open group closed (tool-input-error for a call), error

Fidelity (thinking signatures) and provider extras of an item travel as
``providerMetadata: {"streamflow": {"fidelity": ..., "provider": ...}}`` on the
closing chunk. The usage, model and finish reason of every turn are the message
metadata: ``message-metadata`` after each step, and on ``finish``
(:meth:`~streamflow.wire.targets._ui_run.UIRunEncoder.summary`). With ``ai_sdk=5`` only
fields every v5 client knows are sent (no ``finishReason`` on ``finish``: it came late in
v5).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic_core import from_json, to_json

from ....core._tools import ToolResult
from ....core.errors import StreamflowError
from ....core.events import ContentItem, InlineDataItem, JSONDict, ToolCallItem
from ....core.structured import OutputFrom
from ...dialects._frames_out import sse as chunk
from ...dialects._frames_out import sse_data
from .._ui_run import UIRunEncoder, b64, error_text, partial_arguments, streamflow_metadata

__all__ = ["AISDKMajor", "CURRENT_AI_SDK", "HEADERS", "VercelUIEncoder"]

HEADERS: dict[str, str] = {
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The response headers of a UI message stream (besides ``content-type``)."""

_DONE = sse_data(b"[DONE]")
_PHASES = {"text": "text", "thinking": "reasoning"}


def _json_safe(value: Any) -> Any:
    return from_json(to_json(value, fallback=str))


def _with(payload: JSONDict, **optional: Any) -> JSONDict:
    payload.update({k: v for k, v in optional.items() if v is not None})
    return payload


AISDKMajor = Literal[5, 6, 7]
"""The AI SDK majors whose UI message stream this writes."""
CURRENT_AI_SDK: AISDKMajor = 7
"""The current major of the npm ``ai`` package: the default."""

_FINISH_REASONS = {"stop": "stop", "length": "length", "tool_call": "tool-calls"}
"""A UniEvent finish reason as the AI SDK's ``finishReason`` (the rest: ``other``)."""


class VercelUIEncoder(UIRunEncoder):
    """Writes the AI SDK v5 UI message stream (see the module doc for the mapping)."""

    name = "vercel-ui"
    media_type = "text/event-stream"
    output_name = "output"
    """The structured output's data part: ``data-output``, id ``output``."""

    def __init__(self, *, run: bool = False, message_id: str | None = None,
                 ai_sdk: AISDKMajor = CURRENT_AI_SDK, output: Any = None,
                 output_from: OutputFrom = "auto") -> None:
        if ai_sdk not in get_args(AISDKMajor):
            raise ValueError(f"ai_sdk is the AI SDK major the client runs: one of "
                             f"{', '.join(map(str, get_args(AISDKMajor)))}, not {ai_sdk!r}")
        super().__init__(run=run, message_id=message_id, output=output,
                         output_from=output_from)
        self.ai_sdk = ai_sdk

    def begin_run(self) -> bytes:
        return chunk(_with({"type": "start"}, messageId=self.message_id))

    def begin_step(self, number: int) -> bytes:
        return chunk({"type": "start-step"})

    def end_step(self, number: int, summary: JSONDict) -> bytes:
        out = chunk({"type": "finish-step"})
        if self.run:
            out += chunk({"type": "message-metadata", "messageMetadata": self.summary()})
        return out

    def end_run(self) -> bytes:
        summary = self.summary()
        finish: JSONDict = {"type": "finish"}
        if self.ai_sdk >= 6:
            finish["finishReason"] = _FINISH_REASONS.get(summary["finish_reason"], "other")
        finish["messageMetadata"] = summary
        return chunk(finish) + _DONE

    def output_update(self, value: Any, previous: Any) -> bytes:
        # one data part, replaced in place by its id as the object grows
        return chunk({"type": f"data-{self.output_name}", "id": self.output_name,
                      "data": value})

    def open_group(self, first: ContentItem) -> bytes:
        if first.kind in _PHASES:
            return chunk({"type": f"{_PHASES[first.kind]}-start", "id": self.group_id})
        if isinstance(first, ToolCallItem):
            return chunk({"type": "tool-input-start", "toolCallId": self._call_id(first),
                          "toolName": first.name})
        return b""  # binary and vector items are written whole, when done

    def grow_group(self, first: ContentItem, item: ContentItem) -> bytes:
        if first.kind in _PHASES:
            delta = getattr(item, first.growing)
            if not delta:
                return b""
            return chunk({"type": f"{_PHASES[first.kind]}-delta", "id": self.group_id,
                          "delta": delta})
        if isinstance(item, ToolCallItem) and isinstance(item.arguments, str) and item.arguments:
            return chunk({"type": "tool-input-delta", "toolCallId": self._call_id(first),
                          "inputTextDelta": item.arguments})
        return b""

    def close_group(self, first: ContentItem, done: ContentItem) -> bytes:
        meta = streamflow_metadata(done)
        if first.kind in _PHASES:
            return chunk(_with({"type": f"{_PHASES[first.kind]}-end", "id": self.group_id},
                               providerMetadata=meta))
        if isinstance(done, ToolCallItem):
            return chunk(_with({"type": "tool-input-available",
                                "toolCallId": self._call_id(first), "toolName": done.name,
                                "input": done.arguments}, providerMetadata=meta))
        if done.kind == "inline_thinking":
            data = getattr(done, "data", b"")
            meta = {"streamflow": {**(meta or {}).get("streamflow", {}), "data": b64(data)}}
            return (chunk({"type": "reasoning-start", "id": self.group_id})
                    + chunk({"type": "reasoning-end", "id": self.group_id,
                             "providerMetadata": meta}))
        if isinstance(done, InlineDataItem):
            mime = done.mime_type or "application/octet-stream"
            return chunk({"type": "file", "url": f"data:{mime};base64,{b64(done.data)}",
                          "mediaType": mime})
        return chunk({"type": "data-embedding", "id": self.group_id,
                      "data": getattr(done, "embedding", [])})

    def abort_group(self, first: ContentItem, error: StreamflowError) -> bytes:
        if first.kind in _PHASES:
            return chunk({"type": f"{_PHASES[first.kind]}-end", "id": self.group_id})
        if isinstance(first, ToolCallItem):
            return chunk({"type": "tool-input-error", "toolCallId": self._call_id(first),
                          "toolName": first.name, "input": partial_arguments(error),
                          "errorText": error_text(error)})
        return b""

    def encode_result(self, result: ToolResult) -> bytes:
        if result.denied and self.ai_sdk >= 6:  # the call never ran: the client shows it so
            return chunk({"type": "tool-output-denied", "toolCallId": result.tool_call_id})
        if result.is_error:
            return chunk({"type": "tool-output-error", "toolCallId": result.tool_call_id,
                          "errorText": result.text})
        return chunk({"type": "tool-output-available", "toolCallId": result.tool_call_id,
                      "output": result.to_dict()["content"]})

    def encode_progress(self, call: ToolCallItem, message: str | None, data: Any) -> bytes:
        return chunk({"type": "tool-output-available", "toolCallId": call.tool_call_id,
                      "output": {"message": message, "data": _json_safe(data)},
                      "preliminary": True})

    def encode_approval(self, call: ToolCallItem, approval_id: str) -> bytes:
        if self.ai_sdk >= 6:
            return chunk({"type": "tool-approval-request", "approvalId": approval_id,
                          "toolCallId": call.tool_call_id})
        return chunk({"type": "data-approval-request", "id": approval_id,
                      "data": {"approvalId": approval_id, "toolCallId": call.tool_call_id,
                               "toolName": call.name, "input": call.arguments}})

    def error(self, error: StreamflowError) -> bytes:
        return chunk({"type": "error", "errorText": error_text(error)}) + _DONE

    def _call_id(self, first: ContentItem) -> str:
        call_id = getattr(first, "tool_call_id", "")
        return call_id or f"call-{self.group_id}"
