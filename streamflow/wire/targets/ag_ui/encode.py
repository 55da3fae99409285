"""UniEvents (or a whole Agent run) as AG-UI events, built with the ``ag-ui-protocol`` models.

SSE, one ``data: <json>`` per event (camelCase, as ``ag_ui.encoder.EventEncoder`` writes it). A
run is ``RUN_STARTED``, per turn ``STEP_STARTED`` .. ``STEP_FINISHED`` with the
turn's ``TOOL_CALL_RESULT`` events after it, then ``RUN_FINISHED`` (or
``RUN_ERROR``, after which nothing is sent)::

    text group        TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT*, TEXT_MESSAGE_END
    thinking group    REASONING_START, REASONING_MESSAGE_START, REASONING_MESSAGE_CONTENT*,
                      REASONING_MESSAGE_END, [REASONING_ENCRYPTED_VALUE], REASONING_END
    inline_thinking   REASONING_START, REASONING_ENCRYPTED_VALUE (base64 bytes), REASONING_END
    tool_call group   TOOL_CALL_START, TOOL_CALL_ARGS*, TOOL_CALL_END
                      ([REASONING_ENCRYPTED_VALUE subtype tool-call] for its fidelity)
    inline_data, embedding   CUSTOM {name: "streamflow.inline_data" | "streamflow.embedding"}
    ToolResult        TOOL_CALL_RESULT {content: the result text}
    tool progress     ACTIVITY_SNAPSHOT {activityType: "tool_progress", content: {toolCallId,
                      toolName, message, data}} (one activity per call, replaced each time)
    approval request  the run ends RUN_FINISHED {outcome: {type: "interrupt", interrupts:
                      [{id: approval id, reason: "tool_approval", toolCallId, metadata:
                      {toolName, input}}]}}

The thinking signature (``fidelity["signature"]``, or the whole fidelity object as
JSON) is the encrypted value. ``RUN_FINISHED.usage`` has one ``TokenUsage`` per
turn; model, finish reason, cost and the provider extras are its
``metadata["streamflow"]`` (:meth:`~streamflow.wire.targets._ui_run.UIRunEncoder.summary`).
Empty deltas are not sent.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    ActivitySnapshotEvent,
    BaseEvent,
    CustomEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core import Interrupt as AGUIInterrupt
from pydantic_core import from_json, to_json

from ....core._tools import ToolResult
from ....core.errors import StreamflowError
from ....core.events import (
    ContentItem,
    InlineDataItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ....core.structured import OutputFrom
from ....core.structured.updates import json_patch
from ...dialects._frames_out import sse
from ...dialects.encoder import new_id
from .._ui_run import UIRunEncoder, b64, error_text, streamflow_metadata

__all__ = ["AGUIEncoder", "token_usage"]

def token_usage(turn: JSONDict) -> TokenUsage:
    """A turn summary's usage as AG-UI ``TokenUsage`` (see ``turn_summary``)."""
    usage = turn.get("usage_metadata") or {}
    prompt, output = usage.get("prompt_tokens"), usage.get("response_tokens")
    total = prompt + output if prompt is not None and output is not None else None
    return TokenUsage(model=turn.get("model"), input_tokens=prompt, output_tokens=output,
                      total_tokens=total, reasoning_tokens=usage.get("thoughts_tokens"),
                      cached_input_tokens=usage.get("cached_tokens"))


def _encrypted(fidelity: JSONDict) -> str:
    signature = fidelity.get("signature")
    return signature if isinstance(signature, str) else to_json(fidelity).decode()


class AGUIEncoder(UIRunEncoder):
    """Writes AG-UI events (see the module doc); ``thread_id``/``run_id`` name the run."""

    name = "ag-ui"
    media_type = "text/event-stream"

    def __init__(self, *, run: bool = False, message_id: str | None = None,
                 thread_id: str | None = None, run_id: str | None = None,
                 output: Any = None, output_from: OutputFrom = "auto") -> None:
        super().__init__(run=run, message_id=message_id, output=output,
                         output_from=output_from)
        self.thread_id = thread_id or new_id("thread-")
        self.run_id = run_id or new_id("run-")
        self.message_id = message_id or new_id("msg-")
        self._text_id: str | None = None
        self.interrupts: list[AGUIInterrupt] = []

    def _write(self, *events: BaseEvent) -> bytes:
        # what ``ag_ui.encoder.EventEncoder`` writes (camelCase), framed safely
        return b"".join(sse(e.model_dump(by_alias=True)) for e in events)

    def _id(self) -> str:
        return f"{self.message_id}-{self.group_id}"

    def begin_run(self) -> bytes:
        return self._write(RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id))

    def output_update(self, value: Any, previous: Any) -> bytes:
        # the run's state is {"output": <the object so far>}: a snapshot, then JSON Patches
        if previous is None:
            return self._write(StateSnapshotEvent(snapshot={"output": value}))
        ops = json_patch({"output": previous}, {"output": value})
        return self._write(StateDeltaEvent(delta=ops))  # type: ignore[arg-type]  # validated

    def begin_step(self, number: int) -> bytes:
        self._text_id = None  # a tool call's parent is a text message of its own turn
        return self._write(StepStartedEvent(step_name=f"turn {number}"))

    def end_step(self, number: int, summary: JSONDict) -> bytes:
        return self._write(StepFinishedEvent(step_name=f"turn {number}"))

    def end_run(self) -> bytes:
        outcome = (RunFinishedInterruptOutcome(type="interrupt", interrupts=self.interrupts)
                   if self.interrupts else None)
        return self._write(RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id,
            usage=[token_usage(t) for t in self.turns] or None, outcome=outcome,
            metadata={"streamflow": self.summary()}))

    def open_group(self, first: ContentItem) -> bytes:
        mid = self._id()
        if first.kind == "text":
            self._text_id = mid
            return self._write(TextMessageStartEvent(message_id=mid, role="assistant"))
        if first.kind == "thinking":
            return self._write(ReasoningStartEvent(message_id=mid),
                               ReasoningMessageStartEvent(message_id=mid, role="reasoning"))
        if isinstance(first, ToolCallItem):
            return self._write(ToolCallStartEvent(tool_call_id=self._call_id(first),
                                                  tool_call_name=first.name,
                                                  parent_message_id=self._text_id))
        return b""

    def grow_group(self, first: ContentItem, item: ContentItem) -> bytes:
        mid = self._id()
        if isinstance(item, TextItem) and item.text:
            return self._write(TextMessageContentEvent(message_id=mid, delta=item.text))
        if isinstance(item, ThinkingItem) and item.thinking:
            return self._write(ReasoningMessageContentEvent(message_id=mid, delta=item.thinking))
        if isinstance(item, ToolCallItem) and isinstance(item.arguments, str) and item.arguments:
            return self._write(ToolCallArgsEvent(tool_call_id=self._call_id(first),
                                                 delta=item.arguments))
        return b""

    def close_group(self, first: ContentItem, done: ContentItem) -> bytes:
        mid = self._id()
        meta = streamflow_metadata(done)
        if first.kind == "text":
            return self._write(TextMessageEndEvent(message_id=mid, metadata=meta))
        if first.kind == "thinking":
            events: list[BaseEvent] = [ReasoningMessageEndEvent(message_id=mid, metadata=meta)]
            if done.fidelity:
                events.append(ReasoningEncryptedValueEvent(
                    subtype="message", entity_id=mid, encrypted_value=_encrypted(done.fidelity)))
            return self._write(*events, ReasoningEndEvent(message_id=mid))
        if isinstance(done, ToolCallItem):
            call_id = self._call_id(first)
            events = [ToolCallEndEvent(tool_call_id=call_id, metadata=meta)]
            if done.fidelity:
                events.append(ReasoningEncryptedValueEvent(
                    subtype="tool-call", entity_id=call_id,
                    encrypted_value=_encrypted(done.fidelity)))
            return self._write(*events)
        if done.kind == "inline_thinking":
            return self._write(
                ReasoningStartEvent(message_id=mid, metadata=meta),
                ReasoningEncryptedValueEvent(subtype="message", entity_id=mid,
                                             encrypted_value=b64(getattr(done, "data", b""))),
                ReasoningEndEvent(message_id=mid))
        value: dict[str, Any]
        if isinstance(done, InlineDataItem):
            name, value = "streamflow.inline_data", {"mimeType": done.mime_type,
                                                     "data": b64(done.data)}
        else:
            name, value = "streamflow.embedding", {"embedding": getattr(done, "embedding", [])}
        return self._write(CustomEvent(name=name, value=value, metadata=meta))

    def abort_group(self, first: ContentItem, error: StreamflowError) -> bytes:
        mid = self._id()
        if first.kind == "text":
            return self._write(TextMessageEndEvent(message_id=mid))
        if first.kind == "thinking":
            return self._write(ReasoningMessageEndEvent(message_id=mid),
                               ReasoningEndEvent(message_id=mid))
        if isinstance(first, ToolCallItem):
            return self._write(ToolCallEndEvent(tool_call_id=self._call_id(first)))
        return b""

    def encode_result(self, result: ToolResult) -> bytes:
        meta = {"streamflow": {"name": result.name, "is_error": result.is_error}}
        return self._write(ToolCallResultEvent(
            message_id=f"{self.message_id}-result-{result.tool_call_id}",
            tool_call_id=result.tool_call_id, content=result.text, role="tool", metadata=meta))

    def encode_progress(self, call: ToolCallItem, message: str | None, data: Any) -> bytes:
        content = {"toolCallId": call.tool_call_id, "toolName": call.name, "message": message,
                   "data": from_json(to_json(data, fallback=str))}
        return self._write(ActivitySnapshotEvent(
            message_id=f"{self.message_id}-progress-{call.tool_call_id}",
            activity_type="tool_progress", content=content, replace=True))

    def encode_approval(self, call: ToolCallItem, approval_id: str) -> bytes:
        self.interrupts.append(AGUIInterrupt(
            id=approval_id, reason="tool_approval", tool_call_id=call.tool_call_id,
            message=f"approve the call of {call.name}",
            metadata={"toolName": call.name,
                      "input": from_json(to_json(call.arguments, fallback=str))}))
        return b""  # the run's RUN_FINISHED carries it

    def error(self, error: StreamflowError) -> bytes:
        return self._write(RunErrorEvent(message=error_text(error), code=type(error).__name__))

    def _call_id(self, first: ContentItem) -> str:
        call_id = getattr(first, "tool_call_id", "")
        return call_id or f"{self.message_id}-call-{self.group_id}"
