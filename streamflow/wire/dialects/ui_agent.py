"""An Agent run's events through a UI encoder, live or from their stored records.

:func:`feed_agent_event` writes one :class:`~streamflow.app.agent.AgentEvent` with a
``run=True`` :class:`~streamflow.wire.dialects.ui_run.UIRunEncoder`::

    event (the run's own turns)   the UniEvent: text, reasoning, tool-input-* ...
    tool.progress                 tool_progress: preliminary output / ACTIVITY_SNAPSHOT
    tool.result                   tool_results: tool-output-* / TOOL_CALL_RESULT
    approval.request              approval_request (its approval id is the tool call id,
                                  the key ``agent.resume`` takes)
    output                        output_value: the data-output part / the run's state
                                  (STATE_SNAPSHOT, then STATE_DELTA patches)
    run.end                       finish
    event of a sub-agent          its finished text as progress of the parent's call
    turn.start, tool.start        nothing (the step opens with its first event, the
                                  call was streamed as tool input)

:func:`agent_record` is the same event as JSON (what a Redis stream stores, see
:mod:`streamflow.servers.web.resume`) and :func:`feed_agent_record` writes a record, so a run
re-encoded from its records gives the bytes it gave live (a media result's text
aside: a record keeps its parts as JSON). Sans-IO.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import from_json, to_json

from ...core._tools import ToolResult
from ...core.events import JSONDict, TextItem, ToolCallItem, event_from_dict
from ..targets._ui_run import UIRunEncoder

__all__ = ["agent_record", "feed_agent_event", "feed_agent_record"]


def _json_safe(value: Any) -> Any:
    return from_json(to_json(value, fallback=str))


def _call_dict(call: ToolCallItem) -> JSONDict:
    return {"tool_call_id": call.tool_call_id, "name": call.name,
            "arguments": _json_safe(call.arguments)}


def _call(data: JSONDict) -> ToolCallItem:
    arguments = data.get("arguments")
    return ToolCallItem("tool_call.done", str(data.get("name", "")),
                        str(data.get("tool_call_id", "")),
                        arguments if isinstance(arguments, (str, dict)) else {})


def _is_sub(ev: Any) -> bool:
    return bool(getattr(ev, "depth", 0)) or getattr(ev, "parent_call_id", None) is not None


def agent_record(ev: Any) -> JSONDict | None:
    """``ev`` as a JSON record (``None`` for the events a UI does not show)."""
    kind = ev.type
    if kind == "event":
        if _is_sub(ev):
            item = ev.event.content_items[0] if ev.event.content_items else None
            if not isinstance(item, TextItem) or item.type != "text.done" or not item.text:
                return None
            return {"agent": "sub.text", "parent_call_id": ev.parent_call_id,
                    "text": item.text}
        return {"agent": "event", "event": ev.event.to_dict()}
    if _is_sub(ev) or kind in ("turn.start", "tool.start"):
        return None
    if kind == "tool.progress":
        progress = ev.progress
        return {"agent": kind, "call": _call_dict(ev.call),
                "message": getattr(progress, "message", None),
                "data": _json_safe(getattr(progress, "data", None))}
    if kind == "tool.result":
        return {"agent": kind, "result": ev.result.to_dict()}
    if kind == "approval.request":
        return {"agent": kind, "call": _call_dict(ev.call)}
    if kind == "output":
        return {"agent": kind, "output": _json_safe(ev.output)}
    if kind == "run.end":
        return {"agent": kind}
    return None


def feed_agent_record(encoder: UIRunEncoder, record: JSONDict) -> bytes:
    """The bytes of one stored record (see :func:`agent_record`).

    A record belongs to a run, so it makes ``encoder`` a run encoder (``run=True``: a
    turn's ``stop`` ends its step, ``run.end`` the run), whatever it was created as.
    """
    encoder.run = True
    kind = record.get("agent")
    if kind == "event":
        return encoder.feed(event_from_dict(record["event"]))
    if kind == "tool.progress":
        return encoder.tool_progress(_call(record["call"]), record.get("message"),
                                     record.get("data"))
    if kind == "tool.result":
        data = record["result"]
        return encoder.tool_results([ToolResult(str(data["tool_call_id"]), str(data["name"]),
                                                data.get("content"),
                                                bool(data.get("is_error")))])
    if kind == "approval.request":
        call = _call(record["call"])
        return encoder.approval_request(call, call.tool_call_id)
    if kind == "output":
        return encoder.output_value(record.get("output"))
    if kind == "sub.text":
        parent = encoder.calls.get(str(record.get("parent_call_id")))
        if parent is None:
            return b""
        return encoder.tool_progress(parent, str(record.get("text", "")), None)
    if kind == "run.end":
        return b"" if encoder.finished else encoder.finish()
    return b""


def feed_agent_event(encoder: UIRunEncoder, ev: Any) -> bytes:
    """The bytes of one live AgentEvent (see the module doc)."""
    kind = ev.type
    if kind == "event" and not _is_sub(ev):
        return encoder.feed(ev.event)
    if kind == "tool.result" and not _is_sub(ev):
        return encoder.tool_results([ev.result])
    if kind == "tool.progress" and not _is_sub(ev):
        progress = ev.progress
        return encoder.tool_progress(ev.call, getattr(progress, "message", None),
                                     getattr(progress, "data", None))
    record = agent_record(ev)
    return b"" if record is None else feed_agent_record(encoder, record)
