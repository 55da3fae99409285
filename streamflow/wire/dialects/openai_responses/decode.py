"""Dialect ``openai-responses``: the OpenAI Responses API stream (``POST /v1/responses``).

Mapping onto UniEvent:

* Each content part of a ``message`` item is one group: ``output_text`` -> ``text``;
  ``refusal`` -> ``text`` whose first fragment has ``provider={"refusal": True}``.
  ``response.output_text.annotation.added`` rides on an empty ``text.delta`` as
  ``provider={"annotations": [...]}`` (the ``.done`` lists them all); non-empty
  ``logprobs`` ride the same way. The first fragment carries ``item_id`` (and the
  item's extra fields, e.g. ``phase``).
* ``function_call`` -> a ``tool_call`` group (``call_id`` is the ``tool_call_id``,
  ``provider["item_id"]`` the item id). ``custom_tool_call`` (free-form input) ->
  a ``tool_call`` whose arguments are ``{"input": "<the text>"}``, streamed as
  escaped JSON text, marked ``provider={"custom": True}``.
* ``reasoning`` items: each summary part (``reasoning_summary_*``) and each
  ``reasoning_text`` part is a ``thinking`` group (``provider`` has ``item_id`` and
  ``summary_index``/``content_index``); the item then ends with one
  ``inline_thinking`` group whose ``data`` is the UTF-8 of ``encrypted_content``
  (empty when not requested) and ``fidelity={"id": <reasoning item id>}`` -- the
  opaque part to send back. We chose ``inline_thinking`` over ``fidelity`` on the
  thinking text because a reasoning item often has no summary at all.
* ``image_generation_call`` results -> one ``inline_data`` group; other item types
  (``web_search_call``, ``mcp_call``...) are kept whole in the message
  ``provider["extra_items"]`` with their ``output_index``. Unknown and server-tool
  progress events are kept in ``provider["unknown_events"]``.
* Items stream one at a time (the per-item mapping is in
  :mod:`streamflow.wire.dialects.openai_responses._items`): events of another
  ``output_index`` arriving while an item is open are held and replayed after it,
  so groups never interleave (events of no known type that name an ``output_index`` are
  held with them, so ``unknown_events`` keeps the order of the items). Missing
  ``sequence_number``/``output_index``/``content_index`` are tolerated (resolved by
  ``item_id``, else the current item); the ``.done`` events fill in values a server
  sent without deltas.
* ``response.completed`` -> stop ``stop`` (``tool_call`` when function calls were
  emitted); ``response.incomplete`` -> ``length`` for ``max_output_tokens``, else
  ``unknown``. Usage: ``prompt_tokens=input_tokens``, ``cached_tokens`` and
  ``thoughts_tokens`` from the details, ``response_tokens=output_tokens`` (which
  includes reasoning). The response object (id, model, created_at, service_tier,
  status...) is in the message provider slot. ``response.failed`` and ``error``
  raise ``ProviderError``. There is no ``[DONE]``: a body ending before a terminal
  event raises ``IncompleteStreamError``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic_core import from_json

from ....core.errors import ProtocolError, ProviderError
from ....core.events import FinishReason, JSONDict, Usage
from ...framing.sse import ServerSentEvent
from .._readers import error_code, error_text, expect_obj, opt_index, token_count
from ..base import Decoder, load_json
from ..openai_chat.wire import http_error as _openai_http_error
from . import wire
from ._items import ItemMapper, OutputItem
from .wire import parse_event

__all__ = ["OpenAIResponsesDecoder", "parse_event", "responses_usage"]

_LIFECYCLE = frozenset({"response.created", "response.queued", "response.in_progress"})
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_ROUTED: dict[str, str] = {  # event type -> the item type it implies
    "output_item.added": "", "output_item.done": "",
    "content_part.added": "message", "content_part.done": "message",
    "output_text.delta": "message", "output_text.done": "message",
    "output_text.annotation.added": "message",
    "refusal.delta": "message", "refusal.done": "message",
    "function_call_arguments.delta": "function_call",
    "function_call_arguments.done": "function_call",
    "custom_tool_call_input.delta": "custom_tool_call",
    "custom_tool_call_input.done": "custom_tool_call",
    "reasoning_summary_part.added": "reasoning", "reasoning_summary_part.done": "reasoning",
    "reasoning_summary_text.delta": "reasoning", "reasoning_summary_text.done": "reasoning",
    "reasoning_text.delta": "reasoning", "reasoning_text.done": "reasoning",
}


_EVENT_KEYS = frozenset({"type", "response", "sequence_number"})


def responses_usage(raw: Any) -> Usage:
    """Map a Responses ``usage`` object onto :class:`Usage` (raw kept in ``provider``)."""
    if raw is None:
        return Usage()
    raw = expect_obj(raw, "openai-responses usage")
    inp, out = raw.get("input_tokens_details"), raw.get("output_tokens_details")
    return Usage(cached_tokens=token_count(inp, "cached_tokens"),
                 prompt_tokens=token_count(raw, "input_tokens"),
                 thoughts_tokens=token_count(out, "reasoning_tokens"),
                 response_tokens=token_count(raw, "output_tokens"), provider=raw)


class OpenAIResponsesDecoder(Decoder[ServerSentEvent]):
    """Sans-IO decoder of the OpenAI Responses SSE stream (see module doc)."""

    name: ClassVar[str] = "openai-responses"
    framing: ClassVar[str] = "sse"
    terminator: ClassVar[str] = "response.completed"
    provider_name: ClassVar[str] = "openai"
    is_terminator = staticmethod(wire.is_terminator)
    error_frame = staticmethod(wire.error_frame)
    http_error = staticmethod(_openai_http_error)
    parse_wire = staticmethod(parse_event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._items: dict[int, OutputItem] = {}
        self._ids: dict[str, int] = {}
        self._live: int | None = None
        self._pending: dict[int, list[tuple[str, JSONDict]]] = {}
        self._mapper = ItemMapper(self.emitter)

    @classmethod
    def sniff(cls, frame: Any) -> bool:
        """A Responses stream's events are typed ``response.*`` (or a sequenced ``error``)."""
        if str(getattr(frame, "event", "")).startswith("response."):
            return True
        try:
            ev = from_json(getattr(frame, "data", ""))
        except ValueError:
            return False
        if type(ev) is not dict or type(ev.get("type")) is not str:
            return False
        return ev["type"].startswith("response.") or (
            ev["type"] == "error" and "sequence_number" in ev)

    def handle(self, frame: ServerSentEvent) -> None:
        """Map one event (its JSON ``type`` decides; the ``event:`` line is a fallback)."""
        ev = expect_obj(load_json(frame.data, "openai-responses event"), "openai-responses event")
        kind = ev.get("type") or (frame.event if frame.event != "message" else None)
        if type(kind) is not str:
            raise ProtocolError("openai-responses event without a type", raw=frame.data)
        if self.emitter.stopped:
            raise ProtocolError(f"openai-responses {kind!r} after the terminal event",
                                raw=frame.data)
        short = kind[9:] if kind.startswith("response.") else ""
        if short in _ROUTED:
            self._route(short, ev)
        elif kind in _LIFECYCLE:
            self._note_response(expect_obj(ev.get("response"), "openai-responses response"))
        elif kind in _TERMINAL:
            # fields beside ``response`` that UniEvent has no slot for (llama.cpp's
            # ``timings``) are kept in ``message.provider``
            extra = {k: v for k, v in ev.items() if k not in _EVENT_KEYS}
            if extra:
                self.emitter.note(extra)
            self._terminal(kind, expect_obj(ev.get("response"), "openai-responses response"))
        elif kind == "error":  # flat code/message, or (some servers) an ``error`` object
            nested = ev.get("error")
            err = nested if isinstance(nested, dict) else dict(ev, type=None)
            code = error_code(err.get("code"))
            raise ProviderError(str(err.get("message") or "openai-responses stream error"),
                                code=code, type=error_text(err.get("type") or code), body=ev)
        else:
            index = ev.get("output_index")
            if type(index) is int and self._live is not None and index != self._live:
                self._hold(index, "", ev)  # kept in its item's turn
            else:
                self.emitter.keep("unknown_events", ev)

    # -- routing: one item at a time ---------------------------------------------
    def _index(self, short: str, ev: JSONDict) -> int:
        index = opt_index(ev.get("output_index"), "openai-responses output_index")
        if index is not None:
            return index
        item_id = ev.get("item_id")
        if item_id is None and type(ev.get("item")) is dict:
            item_id = ev["item"].get("id")
        if type(item_id) is str and item_id in self._ids:
            return self._ids[item_id]
        if short == "output_item.added" or (self._live is None and not self._items):
            return max(self._items, default=-1) + 1
        return self._live if self._live is not None else max(self._items)

    def _item(self, index: int, short: str, ev: JSONDict) -> OutputItem:
        it = self._items.get(index)
        if short == "output_item.added":
            if it is not None and (it.emitted or it.done):
                raise ProtocolError(f"output item {index} added twice")
            it = self._items[index] = OutputItem(
                index, expect_obj(ev.get("item"), "openai-responses item"))
        elif it is None:
            item = ev.get("item") if short == "output_item.done" else None
            seed = expect_obj(item, "openai-responses item") if item is not None else {
                "type": _ROUTED[short], "id": ev.get("item_id")}
            it = self._items[index] = OutputItem(index, seed)
        else:
            return it
        if it.id:
            self._ids[it.id] = index
        return it

    def _route(self, short: str, ev: JSONDict) -> None:
        index = self._index(short, ev)
        it = self._item(index, short, ev)
        if self._live is None:
            self._live = index
        if index != self._live:
            self._hold(index, short, ev)
            return
        self._apply(it, short, ev)
        self._drain()

    def _apply(self, it: OutputItem, short: str, ev: JSONDict) -> None:
        self._mapper.apply(it, short, ev)
        if it.done and self._live == it.index:
            self._live = None

    def _hold(self, index: int, short: str, ev: JSONDict) -> None:
        """Hold an event of an item that is not the live one (its text counted as held)."""
        held = self._pending.get(index)
        budget = self.emitter.budget
        if held is None:
            budget.check_groups(len(self._pending) + 1)
            held = self._pending[index] = []
        delta = ev.get("delta")
        if type(delta) is str:
            budget.reserve(len(delta))
        held.append((short, ev))

    def _drain(self) -> None:
        while self._live is None and self._pending:
            index = min(self._pending)
            self._live = index
            held = self._pending.pop(index)
            self.emitter.budget.release(sum(len(ev["delta"]) for _, ev in held
                                            if type(ev.get("delta")) is str))
            for short, ev in held:
                if not short:  # an event of no known type, held with its item's events
                    self.emitter.keep("unknown_events", ev)
                else:
                    self._apply(self._items[index], short, ev)
            if index not in self._items:
                self._live = None  # only unknown events were held for it

    # -- message level ------------------------------------------------------------
    def _note_response(self, response: JSONDict) -> None:
        self.emitter.note({k: v for k, v in response.items() if k not in ("output", "usage")})

    def _terminal(self, kind: str, response: JSONDict) -> None:
        self._note_response(response)
        if kind == "response.failed":
            error = response.get("error")
            err: JSONDict = error if isinstance(error, dict) else {}
            code = error_code(err.get("code"))
            raise ProviderError(str(err.get("message") or "the response failed"), code=code,
                                type=error_text(err.get("type") or code),
                                request_id=error_text(response.get("id")), body=response)
        listed = response.get("output")
        output: list[Any] = listed if isinstance(listed, list) else []
        finals = {o["id"]: o for o in output if type(o) is dict and type(o.get("id")) is str}
        while self._live is not None or self._pending:  # finish what the server left open
            if self._live is not None:
                it = self._items[self._live]
                self._apply(it, "output_item.done", {"item": finals.get(it.id) or it.raw})
            self._drain()
        for n, item in enumerate(output):  # items that never streamed
            item_id = item.get("id") if type(item) is dict else None
            if type(item) is dict and (item_id not in self._ids if type(item_id) is str
                                       else n not in self._items):
                index = n if n not in self._items else max(self._items) + 1
                it = self._items[index] = OutputItem(index, item)
                self._mapper.item_done(it, item)
        if kind == "response.completed":
            finish: FinishReason = "tool_call" if self._mapper.calls else "stop"
        else:
            details = response.get("incomplete_details")
            reason = details.get("reason") if type(details) is dict else None
            finish = "length" if reason == "max_output_tokens" else "unknown"
        self.emitter.stop(responses_usage(response.get("usage")), finish)
