"""OpenTelemetry for a whole Agent run: ``invoke_agent``, ``chat`` and ``execute_tool`` spans.

:class:`AgentTelemetry` observes the events of an :class:`~streamflow.app.agent.AgentStream`
(``observe(ev)`` for each one, or ``async for ev in telemetry.watch(run)``) and writes
the GenAI semantic conventions' agent spans (names in :mod:`streamflow.reactive.sinks.semconv`)::

    invoke_agent {agent}            INTERNAL  gen_ai.operation.name "invoke_agent",
     │                                        gen_ai.agent.name, gen_ai.provider.name,
     │                                        gen_ai.request.model, the run's usage summed
     ├─ chat {model}                CLIENT    one per turn: an OtelSink span (and its
     │                                        gen_ai.client.* metrics)
     └─ execute_tool {tool}         INTERNAL  gen_ai.tool.name, gen_ai.tool.call.id,
          │                                   gen_ai.tool.type "function", description;
          │                                   a tool error: status ERROR, error.type
          └─ (a sub-agent's turns and tools, under the call that ran it)

Tool progress is a ``streamflow.tool.progress`` span event on the tool's span, an
approval request a ``streamflow.approval.request`` event on the agent span. With
``record_content=True`` the tool spans carry ``gen_ai.tool.call.arguments`` and
``gen_ai.tool.call.result`` (opt-in in the conventions: they may hold personal data).
A run that ends with an exception instead of ``run.end`` is closed by
:meth:`AgentTelemetry.finish` (``watch`` calls it), each open span as failed.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from pydantic_core import to_json

from ...core.errors import CancelledStreamError, StreamflowError
from ...wire.redaction import redact_text
from . import semconv as sc
from .otel import INSTRUMENTATION, ClientMetrics, OtelSink, _trace_api, record_exception
from .sanitize import escape_controls

__all__ = ["AgentTelemetry"]


def _error_type(error: BaseException) -> str:
    return sc.ERROR_CANCELLED if isinstance(error, CancelledStreamError) else type(error).__name__


class AgentTelemetry:
    """Spans of one Agent run at a time (see the module doc); reusable run after run.

    ``agent_name`` names the agent (``gen_ai.agent.name``); ``dialect`` and ``model``
    are the provider's (``provider.dialect``, ``provider.model``); ``tools`` (the
    agent's registry) gives each tool span its ``gen_ai.tool.description``.
    """

    def __init__(self, *, agent_name: str = "streamflow", dialect: str | None = None,
                 model: str | None = None, tracer: Any = None, tracer_provider: Any = None,
                 meter_provider: Any = None, metrics: ClientMetrics | bool = True,
                 record_content: bool = False, tools: Any = None) -> None:
        self._trace = _trace_api()
        self.tracer = tracer or self._trace.get_tracer(INSTRUMENTATION,
                                                       tracer_provider=tracer_provider)
        self.metrics = (metrics if isinstance(metrics, ClientMetrics)
                        else ClientMetrics(meter_provider) if metrics else None)
        self.agent_name = agent_name
        self.dialect = dialect
        self.model = model
        self.record_content = record_content
        self.tools = tools
        self.span: Any = None
        self._chats: dict[str | None, OtelSink] = {}
        self._tools: dict[str, Any] = {}
        self._usage = {sc.GEN_AI_USAGE_INPUT_TOKENS: 0, sc.GEN_AI_USAGE_OUTPUT_TOKENS: 0}

    @classmethod
    def for_agent(cls, agent: Any, **options: Any) -> AgentTelemetry:
        """Telemetry named after ``agent``'s provider (its dialect and model)."""
        provider = agent.provider
        options.setdefault("dialect", getattr(provider, "dialect", None))
        options.setdefault("model", getattr(provider, "model", None))
        options.setdefault("tools", getattr(agent, "tools", None))
        return cls(**options)

    async def watch(self, run: AsyncIterable[Any]) -> AsyncIterator[Any]:
        """Yield the events of ``run`` after observing each one; an exception ends the spans."""
        try:
            async for event in run:
                self.observe(event)
                yield event
        except BaseException as error:
            self.finish(error)
            raise

    # -- the events ------------------------------------------------------------------

    def observe(self, ev: Any) -> None:
        """Take one :class:`~streamflow.app.agent.AgentEvent`."""
        kind = ev.type
        if self.span is None:
            self._start()
        if kind == "turn.start":
            self._turn(ev)
        elif kind == "event":
            self._event(ev)
        elif kind == "tool.start":
            self._tool_start(ev)
        elif kind == "tool.progress":
            span = self._tools.get(ev.call.tool_call_id)
            if span is not None:
                progress = getattr(ev, "progress", None)
                message = getattr(progress, "message", None)
                span.add_event(sc.STREAMFLOW_TOOL_PROGRESS_EVENT,
                               {"message": str(message)} if message is not None else {})
        elif kind == "tool.result":
            self._tool_end(ev.result)
        elif kind == "approval.request":
            self.span.add_event(sc.STREAMFLOW_APPROVAL_EVENT, {
                sc.GEN_AI_TOOL_NAME: ev.call.name, sc.GEN_AI_TOOL_CALL_ID: ev.call.tool_call_id})
        elif kind == "run.end":
            self._end(None, getattr(ev, "result", None))

    __call__ = observe

    def finish(self, error: BaseException | None = None) -> None:
        """End the run's open spans (failed with ``error`` when given)."""
        if self.span is not None:
            self._end(error, None)

    # -- spans -------------------------------------------------------------------------

    def _start(self) -> None:
        attributes: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: sc.OPERATION_INVOKE_AGENT,
                                      sc.GEN_AI_AGENT_NAME: self.agent_name}
        provider = sc.provider_name(self.dialect)
        if provider:
            attributes[sc.GEN_AI_PROVIDER_NAME] = provider
        if self.model:
            attributes[sc.GEN_AI_REQUEST_MODEL] = self.model
        self.span = self.tracer.start_span(
            escape_controls(f"{sc.OPERATION_INVOKE_AGENT} {self.agent_name}"),
            kind=self._trace.SpanKind.INTERNAL, attributes=attributes)
        self._usage = dict.fromkeys(self._usage, 0)

    def _parent(self, ev: Any) -> Any:
        """The span a sub-run's spans sit under: its tool call's, else the agent's."""
        parent_id = getattr(ev, "parent_call_id", None)
        return self._tools.get(parent_id, self.span) if parent_id else self.span

    def _turn(self, ev: Any) -> None:
        key = getattr(ev, "parent_call_id", None)
        previous = self._chats.pop(key, None)
        if previous is not None and not previous.finished:
            previous.on_completed()
        chat = OtelSink(dialect=self.dialect, model=self.model, tracer=self.tracer,
                        metrics=self.metrics or False, parent=self._parent(ev))
        self._chats[key] = chat

    def _event(self, ev: Any) -> None:
        key = getattr(ev, "parent_call_id", None)
        chat = self._chats.get(key)
        if chat is None:  # events before any turn.start: a turn all the same
            self._turn(ev)
            chat = self._chats[key]
        event = ev.event
        chat.on_event(event)
        if event.event_type == "stop":
            usage = event.usage_metadata
            if usage is not None and key is None:
                for name, count in ((sc.GEN_AI_USAGE_INPUT_TOKENS, usage.prompt_tokens),
                                    (sc.GEN_AI_USAGE_OUTPUT_TOKENS, usage.response_tokens)):
                    if type(count) is int:
                        self._usage[name] += count
            chat.on_completed()

    def _tool_start(self, ev: Any) -> None:
        call = ev.call
        attributes: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
                                      sc.GEN_AI_TOOL_NAME: call.name,
                                      sc.GEN_AI_TOOL_TYPE: sc.TOOL_TYPE_FUNCTION}
        if call.tool_call_id:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = call.tool_call_id
        tool = self.tools.get(call.name) if self.tools is not None else None
        description = getattr(tool, "description", None)
        if description:
            attributes[sc.GEN_AI_TOOL_DESCRIPTION] = description
        if self.record_content:
            attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS] = to_json(call.arguments,
                                                                fallback=str).decode()
        self._tools[call.tool_call_id] = self.tracer.start_span(
            escape_controls(f"{sc.OPERATION_EXECUTE_TOOL} {call.name}"),
            context=self._trace.set_span_in_context(self._parent(ev)),
            kind=self._trace.SpanKind.INTERNAL, attributes=attributes)

    def _tool_end(self, result: Any) -> None:
        span = self._tools.pop(result.tool_call_id, None)
        if span is None:
            return
        if self.record_content:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, result.text)
        if result.is_error:
            content = result.content
            kind = content.get("error") if isinstance(content, dict) else None
            span.set_attribute(sc.ERROR_TYPE, str(kind or "tool_error"))
            message = content.get("message") if isinstance(content, dict) else None
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, escape_controls(
                redact_text(str(message or kind or "")))))
        span.end()

    def _end(self, error: BaseException | None, result: Any) -> None:
        for chat in self._chats.values():
            if not chat.finished:
                chat._end(error)
        self._chats.clear()
        for span in self._tools.values():
            span.set_attribute(sc.ERROR_TYPE, _error_type(error) if error else "unfinished")
            span.end()
        self._tools.clear()
        span, self.span = self.span, None
        usage = getattr(result, "usage", None)
        if usage is not None:
            counts = {sc.GEN_AI_USAGE_INPUT_TOKENS: usage.prompt_tokens,
                      sc.GEN_AI_USAGE_OUTPUT_TOKENS: usage.response_tokens}
        else:
            counts = dict(self._usage)
        span.set_attributes({k: v for k, v in counts.items() if type(v) is int})
        model = getattr(getattr(result, "message", None), "model", None)
        if isinstance(model, str) and model:
            span.set_attribute(sc.GEN_AI_RESPONSE_MODEL, model)
        if error is not None:
            span.set_attribute(sc.ERROR_TYPE, _error_type(error))
            text = error.message if isinstance(error, StreamflowError) else str(error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR,
                                               escape_controls(redact_text(text))))
            if isinstance(error, Exception) and not isinstance(error, CancelledStreamError):
                record_exception(span, error)
        span.end()
