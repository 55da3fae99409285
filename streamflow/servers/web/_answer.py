"""What the user saw of one answer: recorded while it streams, handed to ``on_finish``.

:class:`AnswerRecorder` is a sink the web responses (and :class:`ResumableStreams`)
run beside the encoder: it keeps each step's ``.done`` items, the text and
reasoning still open when the stream was cut (the partial the user saw), and each
step's tool results. The :class:`Answer` it gives ``on_finish(answer, status=...)``
is the assistant side of the conversation as :class:`~streamflow.core.requests.Turn`
s (what :func:`~streamflow.servers.web.from_ui_messages` returns for it), and
:func:`to_ui_message` turns it (or a plain :class:`~streamflow.core.message.Message`)
into the AI SDK ``UIMessage`` to store, the same parts ``readUIMessageStream`` folds.
"""

from __future__ import annotations

import base64
import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...app._agent_types import total_usage
from ...app.tools import ToolResult
from ...core._tools import DENIED
from ...core.events import (
    ContentItem,
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
    Usage,
    reported_usage,
)
from ...core.message import Message
from ...core.requests import Part, ToolResultPart, Turn
from ...reactive.sinks.base import AsyncSink
from ...wire.redaction import redact_text
from ...wire.targets._ui_run import RunSummary, streamflow_metadata
from ...wire.targets.vercel_ui.encode import CURRENT_AI_SDK, AISDKMajor

FinishStatus = Literal["completed", "failed", "aborted"]
OnFinish = Callable[..., "Awaitable[None] | None"]
"""``on_finish(answer, *, status)``; sync or async."""


@dataclass(slots=True)
class Answer:
    """One answer: its steps as assistant turns, each step's tool results as a user turn.

    ``pending`` holds the ids of the calls the answer ended asking a person about;
    ``continues`` the ``UIMessage`` the answer goes on with (the client's message whose
    calls a person answered, see :func:`~streamflow.servers.web.agent_answer`): the
    answer's first results are those calls'.
    """

    id: str
    turns: list[Turn] = field(default_factory=list)
    error: str | None = None
    usage: Usage | None = None
    """The tokens of every step the provider reported, summed (``None``: none reported;
    a step cut before its end reported none)."""
    pending: list[str] = field(default_factory=list)
    continues: JSONDict | None = None
    metadata: JSONDict | None = None
    """The message metadata the UI stream sent (model, finish reason, usage, each turn's
    summary) after each step, merged as the AI SDK client merges it; ``None`` before a
    step ended."""

    @property
    def text(self) -> str:
        """The answer's text, every step's."""
        return "".join(p.text for t in self.turns if t.role == "assistant" for p in t.parts
                       if isinstance(p, TextItem))


class AnswerRecorder(AsyncSink):
    """Records the answer the encoder writes (see the module doc)."""

    def __init__(self, message_id: str | None = None) -> None:
        self.answer = Answer(message_id or f"msg-{uuid.uuid4().hex}")
        self._summary = RunSummary()
        self._step: list[Part] | None = None
        self._open: dict[str, list[str]] = {}  # kind -> fragments of the open group

    def _parts(self) -> list[Part]:
        if self._step is None:
            self._step = []
            self.answer.turns.append(Turn("assistant", self._step))
        return self._step

    async def on_event(self, event: Any) -> None:
        """A UniEvent: a ``.done`` item joins the step, a delta grows the open group."""
        self.on_event_nowait(event)

    def on_event_nowait(self, event: Any) -> bool:
        """:meth:`on_event`, which never waits: always taken at once."""
        if not isinstance(event, UniEvent):
            return True
        if self._summary.feed(event) is not None:  # merged as the client merges each one
            self.answer.metadata = merge_metadata(self.answer.metadata, self._summary.summary())
        if event.event_type == "stop":
            self._close_open()
            self._step = None
            usage = reported_usage(event.usage_metadata)
            if usage is not None:
                self.answer.usage = total_usage([self.answer.usage, usage])
            return True
        for item in event.content_items:
            if item.type.endswith(".done"):
                self._open.pop(item.kind, None)
                self._parts().append(item)  # type: ignore[arg-type]
            elif isinstance(item, TextItem | ThinkingItem):
                self._parts()
                self._open.setdefault(item.kind, []).append(
                    item.text if isinstance(item, TextItem) else item.thinking)
        return True

    def _close_open(self) -> None:
        for kind, fragments in self._open.items():
            text = "".join(fragments)
            if text:
                self._parts().append(TextItem("text.done", text) if kind == "text"
                                     else ThinkingItem("thinking.done", text))
        self._open.clear()

    def continue_from(self, message: Mapping[str, Any]) -> None:
        """The answer goes on with ``message`` (a ``UIMessage``), under its id."""
        self.answer.continues = dict(message)
        self.answer.id = str(message.get("id") or self.answer.id)

    def on_approval_request(self, call: ToolCallItem) -> None:
        """The answer ends asking a person about ``call``."""
        self.answer.pending.append(call.tool_call_id)

    def on_tool_result(self, result: ToolResult) -> None:
        """A tool result of the step that just ended."""
        part = result.to_part()
        turns = self.answer.turns
        if turns and turns[-1].role == "user":
            turns[-1].parts.append(part)
        else:
            turns.append(Turn("user", [part]))
        self._step = None

    async def on_end(self, error: BaseException | None) -> None:
        """The stream ended: what is still open is the partial the user saw."""
        self._close_open()
        if error is not None and self.answer.error is None:
            self.answer.error = redact_text(str(error))  # handed to on_finish: no key

    def finish(self) -> Answer:
        """The answer so far (open groups closed as the user saw them)."""
        self._close_open()
        return self.answer


async def call_on_finish(on_finish: OnFinish | None, answer: Answer,
                         status: FinishStatus) -> None:
    """Call the app's ``on_finish`` (sync or async) once."""
    if on_finish is None:
        return
    outcome = on_finish(answer, status=status)
    if inspect.isawaitable(outcome):
        await outcome


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _meta(item: ContentItem) -> dict[str, Any]:
    meta = streamflow_metadata(item)
    return {"providerMetadata": meta} if meta else {}


def _with_result(part: JSONDict, result: ToolResultPart, ai_sdk: int) -> JSONDict:
    """A tool part with its call's result: output-available, output-error, or (AI SDK 6
    and later) output-denied for a call a person denied, as the client shows each."""
    if result.is_error and ai_sdk >= 6 and _denied(result):  # the approval as the client has it
        approval = {"id": part["toolCallId"], **(part.get("approval") or {}), "approved": False}
        return {**part, "state": "output-denied", "approval": approval}
    if result.is_error:
        return {**part, "state": "output-error", "errorText": result.text}
    try:
        output: Any = json.loads(result.text)
    except ValueError:
        output = result.text
    return {**part, "state": "output-available", "output": output}


def _denied(result: ToolResultPart) -> bool:
    """Whether ``result`` is a denied call's (``{"error": "ApprovalDenied", ...}``)."""
    try:
        content = json.loads(result.text)
    except ValueError:
        return False
    return isinstance(content, dict) and content.get("error") == DENIED


def _ui_part(item: Part, results: dict[str, ToolResultPart], ai_sdk: int) -> JSONDict | None:
    if isinstance(item, TextItem):
        return {"type": "text", "text": item.text, "state": "done", **_meta(item)}
    if isinstance(item, ThinkingItem):
        return {"type": "reasoning", "text": item.thinking, "state": "done", **_meta(item)}
    if isinstance(item, InlineThinkingItem):
        own = (streamflow_metadata(item) or {}).get("streamflow", {})
        return {"type": "reasoning", "text": "", "state": "done",
                "providerMetadata": {"streamflow": {**own, "data": _b64(item.data)}}}
    if isinstance(item, InlineDataItem):
        if item.provider and "url" in item.provider and not item.data:
            return {"type": "file", "mediaType": item.mime_type, "url": item.provider["url"]}
        mime = item.mime_type or "application/octet-stream"
        return {"type": "file", "mediaType": mime, "url": f"data:{mime};base64,{_b64(item.data)}"}
    if isinstance(item, ToolCallItem):
        args: Any = item.arguments
        if isinstance(args, str):
            try:
                args = json.loads(args) if args else {}
            except ValueError:
                pass
        part: JSONDict = {"type": f"tool-{item.name}", "toolCallId": item.tool_call_id,
                          "state": "input-available", "input": args}
        meta = streamflow_metadata(item)
        if meta:
            part["callProviderMetadata"] = meta
        result = results.get(item.tool_call_id)
        return part if result is None else _with_result(part, result, ai_sdk)
    return None


def to_ui_message(message: Answer | Message, *, id: str | None = None,
                  ai_sdk: AISDKMajor = CURRENT_AI_SDK) -> JSONDict:
    """``message`` as the AI SDK ``UIMessage`` the user saw: ``{"id", "role", "parts"}``,
    the parts the client of major ``ai_sdk`` folds from the stream.

    Each step starts with ``step-start``; tool calls carry their results (state
    ``output-available`` / ``output-error``; a denied call ``output-denied`` from AI SDK
    6 on); a call the answer ended asking about is ``approval-requested`` (its approval id
    the call id; AI SDK 5: ``input-available`` and the ``data-approval-request`` part);
    an answer that goes on with a message (``Answer.continues``) is that message's parts,
    its answered calls with their results, then the new steps; ``metadata`` is the
    message metadata the stream sent, merged over the continued message's. Signatures travel in
    ``providerMetadata.streamflow`` as the vercel-ui encoder writes them, so
    :func:`~streamflow.servers.web.from_ui_messages` gives the provider the same blocks back.
    """
    continued: list[JSONDict] = []
    pending: list[str] = []
    if isinstance(message, Message):
        turns = [Turn.assistant(message)]
        message_id = id or message.id or f"msg-{uuid.uuid4().hex}"
    else:
        turns, message_id, pending = message.turns, id or message.id, message.pending
        continued = list((message.continues or {}).get("parts") or [])
    results = {p.tool_call_id: p for t in turns if t.role == "user" for p in t.parts
               if isinstance(p, ToolResultPart)}
    parts = [_with_result(p, results[p["toolCallId"]], ai_sdk)
             if isinstance(p, dict) and p.get("toolCallId") in results else p for p in continued]
    for turn in turns:
        if turn.role != "assistant":
            continue
        parts.append({"type": "step-start"})
        parts.extend(p for p in (_ui_part(i, results, ai_sdk) for i in turn.parts)
                     if p is not None)
    asked = [i for i, p in enumerate(parts) if isinstance(p, dict)
             and p.get("toolCallId") in pending and p.get("state") == "input-available"]
    for index in asked:
        part = parts[index]
        call_id = part["toolCallId"]
        if ai_sdk >= 6:  # a new dict: the continued message's own parts stay as they were
            parts[index] = {**part, "state": "approval-requested", "approval": {"id": call_id}}
        else:
            parts.append({"type": "data-approval-request", "id": call_id, "data": {
                "approvalId": call_id, "toolCallId": call_id,
                "toolName": part["type"][5:], "input": part.get("input")}})
    out: JSONDict = {"id": message_id, "role": "assistant", "parts": parts}
    if isinstance(message, Answer):
        metadata = merge_metadata((message.continues or {}).get("metadata"), message.metadata)
        if metadata is not None:
            out["metadata"] = metadata
    return out


def merge_metadata(base: Any, new: Any) -> Any:
    """``new`` message metadata over ``base``, as the AI SDK client merges them: objects
    key by key, anything else (lists included) replaced; ``None`` for neither."""
    if new is None:
        return base
    if not isinstance(base, dict) or not isinstance(new, dict):
        return new
    merged = dict(base)
    for key, value in new.items():
        merged[key] = merge_metadata(merged.get(key), value) \
            if isinstance(value, dict) else value
    return merged
