"""The shared half of the web UI encoders (``vercel-ui``, ``ag-ui``): runs, steps and groups.

A UI protocol renders a whole *run* -- one answer, or a whole Agent run of several
turns -- as one message: the run opens once, each turn is a step, the tool results
sit between the steps, and the run closes with the usage of every turn.
:class:`UIRunEncoder` keeps that bookkeeping and calls a subclass's hooks::

    enc = get_encoder("vercel-ui")()           # one stream: stop ends the run
    body = b"".join(enc.feed(e) for e in events)

    enc = get_encoder("vercel-ui")(run=True)   # an Agent run: stop ends the step only
    for turn in turns:
        out += b"".join(enc.feed(e) for e in turn.events)
        out += enc.tool_results(turn.results)  # ToolResult objects, in call order
    out += enc.finish()                        # or enc.fail(error)

Between the steps of an Agent run, :meth:`UIRunEncoder.tool_progress` writes a running
tool's progress (the AI SDK's preliminary output) and
:meth:`UIRunEncoder.approval_request` a call waiting for a person's approval.

Groups never interleave (UniEvent grammar), so one open group is enough state: the
first fragment opens it, every fragment grows it, the ``.done`` item closes it.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from ...core._tools import ToolResult
from ...core.delivery import DELIVERY
from ...core.errors import StreamflowError, ToolCallArgumentParseError
from ...core.events import (
    CHOICE_FINISH_REASONS,
    USAGE_SO_FAR,
    ContentItem,
    JSONDict,
    ToolCallItem,
    UniEvent,
    Usage,
    reported_usage,
    usage_to_dict,
)
from ...core.structured import OutputFrom, OutputParser
from ...core.structured.updates import OutputUpdates
from ..dialects.encoder import Encoder

UNIEVENT_KEYS = frozenset({USAGE_SO_FAR, CHOICE_FINISH_REASONS, DELIVERY, "choices",
                           "candidates"})
"""Event ``provider`` keys that are UniEvent's own or another choice's, never a turn's
(how an answer was delivered names the server's endpoints: never the client's)."""

_COUNTERS = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens",
             "cache_write_tokens", "cost")


def total_usage(usages: Sequence[Usage | None]) -> Usage | None:
    """The counters of every turn added up (``None`` where no turn reported one)."""
    known = [u for u in usages if u is not None]
    if not known:
        return None
    if len(known) == 1:
        return known[0]
    total = Usage()
    for name in _COUNTERS:
        values = [getattr(u, name) for u in known if getattr(u, name) is not None]
        if values:
            setattr(total, name, sum(values))
    return total


def turn_summary(event: UniEvent, provider: JSONDict) -> JSONDict:
    """One turn's metadata: ``id``, ``model``, ``finish_reason``, ``usage_metadata``, ``provider``.

    ``provider`` is every event-level provider slot of the turn merged (the first
    delta's id and model, the stop event's raw stop reason, cost...).
    """
    merged = {**provider, **{k: v for k, v in (event.provider or {}).items()
                             if k not in UNIEVENT_KEYS}}
    return {"id": merged.get("id"), "model": merged.get("model"),
            "finish_reason": event.finish_reason,
            "usage_metadata": usage_to_dict(reported_usage(event.usage_metadata)),
            "provider": merged or None}


class RunSummary:
    """A run's metadata as its UI stream sends it, fed the run's events (sans-IO): each
    turn's :func:`turn_summary` and the usage they reported. One per run: the encoder's
    ``message-metadata`` and an :class:`~streamflow.servers.web.Answer`'s come from it."""

    __slots__ = ("turns", "usages", "_provider")

    def __init__(self) -> None:
        self.turns: list[JSONDict] = []
        self.usages: list[Usage | None] = []
        self._provider: JSONDict = {}

    def feed(self, event: UniEvent) -> JSONDict | None:
        """Take one event; the turn's summary when it is a ``stop``, else ``None``."""
        if event.event_type == "stop":
            summary = turn_summary(event, self._provider)
            self._provider = {}
            self.turns.append(summary)
            self.usages.append(reported_usage(event.usage_metadata))
            return summary
        if event.provider:
            self._provider.update((k, v) for k, v in event.provider.items()
                                  if k not in UNIEVENT_KEYS)
        return None

    def summary(self) -> JSONDict:
        """The run's metadata: the last turn's model and finish reason, usage added up, turns."""
        last = self.turns[-1] if self.turns else {}
        return {"model": last.get("model"), "finish_reason": last.get("finish_reason"),
                "usage_metadata": usage_to_dict(total_usage(self.usages)),
                "turns": list(self.turns)}


class UIRunEncoder(Encoder):
    """Runs, steps and groups for a UI protocol; subclasses write the protocol's events.

    ``run=True`` keeps the run open after a ``stop`` (an Agent run: call
    :meth:`tool_results` between turns and :meth:`finish` at the end); by default
    the ``stop`` event ends the run too. ``message_id`` names the run's message
    (generated when omitted). ``output`` (a structured output's type, as for
    ``streamflow.stream(..., output=T)``) adds the partial object to the run as it
    arrives (:meth:`output_update`; :class:`~streamflow.core.structured.updates.OutputUpdates`
    says when) and the validated object before the run ends; an output that does not
    validate ends the run with the error instead.
    """

    def __init__(self, *, run: bool = False, message_id: str | None = None,
                 output: Any = None, output_from: OutputFrom = "auto") -> None:
        super().__init__()
        self.output = None if output is None else OutputUpdates(
            OutputParser(output, output_from=output_from))
        self.run = run
        self.message_id = message_id
        self.run_summary = RunSummary()
        self.turns = self.run_summary.turns
        self.started = False
        self.step_open = False
        self.group: ContentItem | None = None
        self.group_id = ""
        self._groups = 0
        self.calls: dict[str, ToolCallItem] = {}  # the run's finished tool calls, by id
        self._run_output: Any = None  # the last output the run gave (output_value)

    # -- the driving side --------------------------------------------------------------

    def feed(self, event: UniEvent) -> bytes:
        """The bytes for ``event``; ``stop`` closes the step (and the run unless ``run``)."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder fed after its stream ended")
        if self.other_choice(event):  # n > 1: a UI message shows the first choice
            return b""
        return self.encode_event(event)

    def tool_results(self, results: Sequence[ToolResult]) -> bytes:
        """The bytes of a turn's tool results (between two steps of an Agent run)."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder got tool results after the run ended")
        out = [self._begin()]
        out.extend(self.encode_result(result) for result in results)
        return b"".join(out)

    def tool_progress(self, call: ToolCallItem, message: str | None, data: Any = None) -> bytes:
        """The bytes of one progress report of the running tool ``call``."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder got tool progress after the run ended")
        return self._begin() + self.encode_progress(call, message, data)

    def approval_request(self, call: ToolCallItem, approval_id: str) -> bytes:
        """The bytes asking to approve ``call`` before it runs (the run then ends pending)."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder got an approval request after the run ended")
        return self._begin() + self.encode_approval(call, approval_id)

    def output_value(self, value: Any) -> bytes:
        """The bytes of a structured output the run computed itself (an
        ``Agent(output=T)`` run's ``"output"`` events): ``value`` is plain JSON."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder got an output after the run ended")
        previous, self._run_output = self._run_output, value
        return self._begin() + self.output_update(value, previous)

    def finish(self) -> bytes:
        """The bytes that end a ``run=True`` run successfully (usage of every turn)."""
        if self.finished:
            raise RuntimeError(f"{self.name} encoder finished twice")
        self.finished = True
        return self._begin() + self._end_run()

    def _end_run(self) -> bytes:
        """The run's end: with an output, the validated object first (or the error)."""
        if self.output is None:
            return self.end_run()
        previous = self.output.sent
        try:
            final = self.output.final(self.output.parser.final())
        except StreamflowError as error:  # an output that does not validate: the run fails
            return self.error(error)
        return self.output_update(final, previous) + self.end_run()

    def end(self) -> bytes | None:
        """When the events ran out: a ``run=True`` run whose last turn stopped is finished
        (:meth:`finish`); a turn still open is an incomplete body (``None``)."""
        if not self.finished and self.run and not self.step_open and self.turns:
            return self.finish()
        return super().end()

    def encode_event(self, event: UniEvent) -> bytes:
        """One event: open the run and the step as needed, then the item or the stop."""
        out = [self._begin()]
        if not self.step_open:
            self.step_open = True
            out.append(self.begin_step(len(self.turns) + 1))
        summary = self.run_summary.feed(event)
        if summary is not None:
            self.step_open = False
            out.append(self.end_step(len(self.turns), summary))
            if not self.run:
                self.finished = True
                out.append(self._end_run())
            return b"".join(out)
        item = event.content_items[0]
        if self.group is None:
            self.group = item
            self._groups += 1
            self.group_id = f"{item.kind}-{self._groups}"
            out.append(self.open_group(item))
        if item.type.endswith(".done"):
            if isinstance(item, ToolCallItem):
                self.calls[item.tool_call_id] = item
            out.append(self.close_group(self.group, item))
            self.group = None
        else:
            out.append(self.grow_group(self.group, item))
        if self.output is not None:
            previous = self.output.sent
            value = self.output.feed(event)
            if value is not None:
                out.append(self.output_update(value, previous))
        return b"".join(out)

    def encode_error(self, error: StreamflowError) -> bytes:
        """The in-band error: the run opened if need be, the open group closed, the error."""
        out = [self._begin()]
        if self.group is not None:
            out.append(self.abort_group(self.group, error))
            self.group = None
        out.append(self.error(error))
        return b"".join(out)

    def _begin(self) -> bytes:
        if self.started:
            return b""
        self.started = True
        return self.begin_run()

    def summary(self) -> JSONDict:
        """The run's metadata (:meth:`RunSummary.summary`)."""
        return self.run_summary.summary()

    # -- the protocol's hooks (each returns the bytes to write) -------------------------

    def begin_run(self) -> bytes:
        """The run opens (before its first event)."""
        raise NotImplementedError

    def begin_step(self, number: int) -> bytes:
        """Turn ``number`` (from 1) starts."""
        raise NotImplementedError

    def end_step(self, number: int, summary: JSONDict) -> bytes:
        """Turn ``number`` ended with ``summary`` (see :func:`turn_summary`)."""
        raise NotImplementedError

    def end_run(self) -> bytes:
        """The run ended successfully (:meth:`summary` holds its metadata)."""
        raise NotImplementedError

    def open_group(self, first: ContentItem) -> bytes:
        """A group starts with ``first`` (``self.group_id`` names it)."""
        raise NotImplementedError

    def grow_group(self, first: ContentItem, item: ContentItem) -> bytes:
        """A fragment ``item`` of the group ``first`` opened (``first`` itself included)."""
        raise NotImplementedError

    def close_group(self, first: ContentItem, done: ContentItem) -> bytes:
        """The group ends with its ``.done`` item."""
        raise NotImplementedError

    def abort_group(self, first: ContentItem, error: StreamflowError) -> bytes:
        """The stream failed while the group was open."""
        raise NotImplementedError

    def encode_result(self, result: ToolResult) -> bytes:
        """One tool result."""
        raise NotImplementedError

    def output_update(self, value: Any, previous: Any) -> bytes:
        """The structured output is now ``value`` (plain JSON; ``previous`` was sent last,
        ``None`` before the first update)."""
        raise NotImplementedError

    def encode_progress(self, call: ToolCallItem, message: str | None, data: Any) -> bytes:
        """One progress report of a running tool."""
        raise NotImplementedError

    def encode_approval(self, call: ToolCallItem, approval_id: str) -> bytes:
        """A call waiting for approval."""
        raise NotImplementedError

    def error(self, error: StreamflowError) -> bytes:
        """The terminal error event (nothing follows it)."""
        raise NotImplementedError


def error_text(error: StreamflowError) -> str:
    """``"<ErrorClass>: <message>"``, the text a UI shows for a failed stream."""
    return f"{type(error).__name__}: {error.message}"


def partial_arguments(error: StreamflowError) -> str:
    """The argument text of the tool call open when ``error`` ended the stream ("" if unknown)."""
    if isinstance(error, ToolCallArgumentParseError):
        return error.arguments
    items = error.partial.items if error.partial is not None else []
    last = items[-1] if items else None
    if isinstance(last, ToolCallItem) and isinstance(last.arguments, str):
        return last.arguments
    return ""


def b64(data: bytes) -> str:
    """Bytes as base64 text."""
    return base64.b64encode(data).decode("ascii")


def streamflow_metadata(item: ContentItem) -> dict[str, Any] | None:
    """``{"streamflow": {"fidelity", "provider"}}`` of an item (the keys that are set), or None."""
    extra = {k: v for k, v in (("fidelity", item.fidelity), ("provider", item.provider)) if v}
    return {"streamflow": extra} if extra else None
