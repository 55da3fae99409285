"""De-interleaving of OpenAI-style ``tool_calls`` fragments keyed by ``index``.

Fragments of different calls may interleave on the wire; UniEvent groups may not.
:class:`ToolCalls` turns the fragments into groups in call order, in linear time:

* The first call seen streams live: its first fragment (name, id, any arguments)
  is a ``tool_call.delta`` at once, and so is each later fragment of it.
* Fragments of other calls are buffered.
* When a new ``index`` first appears, the live call's arguments are asked whether
  they already form a closed JSON object (:class:`ObjectEnd` scans each byte once,
  however many indices arrive: linear cost). If so the call is closed
  (``tool_call.done``) and the lowest buffered call goes live, its buffer flushed
  as one fragment; this repeats while the new live call is complete too. Otherwise
  everything waits.
* Buffered bytes count against the message's :class:`~streamflow.core.limits.Budget`
  (``max_message_bytes``, and each buffered call against ``max_groups``), so a
  flood of out-of-order calls ends in ``LimitExceededError`` at the limit.
* :meth:`ToolCalls.settle` (the finish chunk, ``[DONE]``, or content of another
  kind) closes the live call, then emits every buffered call in index order: one
  fragment with name, id and the joined arguments, then its ``.done``.

Fragments that carry nothing (no id, no name, empty arguments) are ignored, as
are whitespace-only arguments for a closed call; any other fragment for a closed
call is a :class:`ProtocolError`. A fragment whose ``id`` differs from its index's
call starts a new call (some servers reuse ``index`` 0 for every call). Calls
with empty arguments give ``{}``. ``extra_content`` on a call (Gemini thought
signatures) goes to ``fidelity``; other unknown keys, and a ``type`` other than
``"function"``, go to the item's ``provider``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any, Final

from ....core.errors import ProtocolError
from ....core.events import JSONDict, ToolCallItem
from ....core.message import append_packed
from ....core.partial_json import ObjectEnd
from .._readers import expect_str, wrong
from ..base import Emitter, merge_provider

_CALL_KEYS: Final = frozenset({"index", "id", "type", "function"})
_FUNCTION_KEYS: Final = frozenset({"name", "arguments"})


class _Call:
    """One call's state: buffered, live, or closed."""

    __slots__ = ("closed", "end", "fidelity", "id", "index", "loose", "name", "parts", "provider",
                 "parts_loose", "serial", "size", "unscanned")

    def __init__(self, index: int, serial: int, call_id: str, name: str) -> None:
        self.index = index
        self.serial = serial
        self.id = call_id
        self.name = name
        self.parts: list[str] = []  # a buffered call's arguments (packed: append_packed)
        self.parts_loose = 0  # single fragments at the end of ``parts``
        self.size = 0
        self.provider: JSONDict | None = None
        self.fidelity: JSONDict | None = None
        self.closed = False
        self.end = ObjectEnd()
        self.unscanned: list[str] = []  # the live call's text not yet fed to ``end`` (packed)
        self.loose = 0  # single fragments at the end of ``unscanned``

    def item(self) -> ToolCallItem:
        """Everything buffered as one ``tool_call.delta`` fragment."""
        return ToolCallItem("tool_call.delta", self.name, self.id, "".join(self.parts),
                            self.fidelity, self.provider)


class ToolCalls:
    """The tool calls of one choice, de-interleaved onto an :class:`Emitter` (see module doc).

    ``prepare`` is called right before a call's first fragment is emitted (the
    choice flushes what must precede it); ``tag`` is merged into every fragment's
    ``provider`` (``{"choice_index": i}`` for choices other than 0).
    """

    __slots__ = ("_by_index", "_em", "_live", "_prepare", "_serial", "_tag", "_waiting", "count")

    def __init__(self, em: Emitter, prepare: Callable[[], None],
                 tag: JSONDict | None = None) -> None:
        self._em = em
        self._prepare = prepare
        self._tag = tag
        self._by_index: dict[int, _Call] = {}
        self._live: _Call | None = None
        self._waiting: list[tuple[int, int, _Call]] = []
        self._serial = 0
        self.count = 0  # calls emitted so far

    @property
    def active(self) -> bool:
        """True while a call is live or buffered."""
        return self._live is not None or bool(self._waiting)

    def known(self, index: int) -> bool:
        """True once a call at ``index`` was seen."""
        return index in self._by_index

    def fragment(self, raw: Any, position: int) -> None:
        """Take one ``tool_calls`` entry (``position``: its place in the array, if no index)."""
        if type(raw) is not dict:
            raise wrong("a tool_calls entry", "a JSON object", raw)
        index = raw.get("index", position)
        if type(index) is not int:
            raise wrong("tool call index", "an integer", index)
        fn = raw.get("function")
        if fn is None:
            fn = {}
        elif type(fn) is not dict:
            raise wrong("tool call function", "a JSON object", fn)
        args = fn.get("arguments")
        if type(args) is dict:  # a few servers send the object itself
            args = json.dumps(args, ensure_ascii=False)
        self.add(index, expect_str(raw.get("id"), "tool_call.id"),
                 expect_str(fn.get("name"), "tool_call.function.name"),
                 expect_str(args, "tool_call.function.arguments"), *_extras(raw, fn))

    def arguments_fragment(self, raw: Any) -> bool:
        """Fast path of :meth:`fragment`: arguments only, for an open call (False: not that).

        An entry without name, new id or extra keys, whose ``index`` is a call
        neither new nor closed: the live call's arguments are emitted, another
        call's buffered. Any other entry is left to :meth:`fragment`, untouched.
        """
        if type(raw) is not dict or not _CALL_KEYS.issuperset(raw):
            return False
        fn = raw.get("function")
        if type(fn) is not dict or not _FUNCTION_KEYS.issuperset(fn):
            return False
        args = fn.get("arguments")
        index = raw.get("index", 0)
        if type(args) is not str or type(index) is not int:
            return False
        call = self._by_index.get(index)
        call_id = raw.get("id")
        if (call is None or call.closed or fn.get("name") not in (None, "")
                or raw.get("type") not in (None, "function")
                or (call_id is not None and call_id != "" and call_id != call.id)):
            return False
        if args:
            if call is self._live:
                tag = self._tag
                self._em.delta(ToolCallItem("tool_call.delta", "", "", args, None,
                                            merge_provider(None, tag) if tag else None))
                call.loose = append_packed(call.unscanned, args, call.loose)
            else:
                self._buffer(call, args, None, None)
        return True

    def add(self, index: int, call_id: str, name: str, args: str,
            provider: JSONDict | None = None, fidelity: JSONDict | None = None) -> None:
        """Route one fragment of the call at ``index``."""
        call = self._by_index.get(index)
        if call is not None and call_id and call.id and call_id != call.id:
            call = None  # a new call reusing the index
        if call is None:
            if not (call_id or name or args or provider or fidelity):
                return
            call = self._by_index[index] = _Call(index, self._serial, call_id, name)
            self._serial += 1
            self._buffer(call, args, provider, fidelity)
            self._arrive(call)
            return
        if call.closed:
            if args.strip() or provider or fidelity or (name and name != call.name) \
                    or (call_id and call_id != call.id):
                raise ProtocolError(f"tool call fragment for index {index} after that call "
                                    "was closed")
            return
        if name and name != call.name:
            if call is self._live or call.name:
                raise ProtocolError(f"tool call {index}: name changed from {call.name!r} to "
                                    f"{name!r}")
            call.name = name
        if call_id and call_id != call.id:
            if call is self._live:
                raise ProtocolError(f"tool call {index}: id {call_id!r} arrived after the call "
                                    "started")
            call.id = call_id
        if call is self._live:
            if args or provider or fidelity:
                self._em.delta(ToolCallItem("tool_call.delta", "", "", args, fidelity,
                                            self._tagged(provider)))
                call.loose = append_packed(call.unscanned, args, call.loose)
        else:
            self._buffer(call, args, provider, fidelity)

    def settle(self) -> None:
        """Close the live call, then emit every buffered call in index order."""
        if self._live is not None:
            self._close_live()
        while self._waiting:
            self._go_live(heappop(self._waiting)[2])
            self._close_live()

    def pending_items(self) -> list[ToolCallItem]:
        """The buffered calls as unfinished ``tool_call.delta`` items (for a partial message)."""
        return [entry[2].item() for entry in sorted(self._waiting)]

    # -- internals ------------------------------------------------------------
    def _tagged(self, provider: JSONDict | None) -> JSONDict | None:
        return merge_provider(provider, self._tag) if self._tag else provider

    def _buffer(self, call: _Call, args: str, provider: JSONDict | None,
                fidelity: JSONDict | None) -> None:
        if args:
            self._em.budget.reserve(len(args), call.size + len(args))
            call.size += len(args)
            call.parts_loose = append_packed(call.parts, args, call.parts_loose)
        if provider:
            call.provider = merge_provider(call.provider, provider)
        if fidelity:
            call.fidelity = {**call.fidelity, **fidelity} if call.fidelity else fidelity

    def _arrive(self, call: _Call) -> None:
        if self._live is None:
            self._go_live(call)
            return
        self._em.budget.check_groups(len(self._waiting) + 1)
        heappush(self._waiting, (call.index, call.serial, call))
        while self._waiting and self._live_complete():
            self._close_live()
            self._go_live(heappop(self._waiting)[2])

    def _live_complete(self) -> bool:
        call = self._live
        if call is None:
            return False
        for text in call.unscanned:
            call.end.feed(text)
        call.unscanned, call.loose = [], 0
        return call.end.closed

    def _go_live(self, call: _Call) -> None:
        self._prepare()
        em = self._em
        em.close_group()
        self._live = call
        self.count += 1
        item = call.item()
        item.provider = self._tagged(item.provider)
        em.budget.release(call.size)  # counted as fragments from here on
        call.parts, call.size, call.parts_loose = [], 0, 0
        call.loose = append_packed(call.unscanned, str(item.arguments), call.loose)
        em.delta(item)

    def _close_live(self) -> None:
        call = self._live
        assert call is not None
        self._live = None
        call.closed = True
        call.parts, call.unscanned, call.parts_loose, call.loose = [], [], 0, 0
        self._em.close_group()


def _extras(raw: JSONDict, fn: JSONDict) -> tuple[JSONDict | None, JSONDict | None]:
    """Unknown keys of a call fragment: ``(provider, fidelity)``."""
    provider: JSONDict | None = None
    fidelity: JSONDict | None = None
    if not _CALL_KEYS.issuperset(raw) or raw.get("type") not in (None, "function"):
        for key, value in raw.items():
            if value is None or (key in _CALL_KEYS and key != "type"):
                continue
            if key == "type":
                if value != "function":
                    provider = {**(provider or {}), "type": value}
            elif key == "extra_content":
                fidelity = {"extra_content": value}
            else:
                provider = {**(provider or {}), key: value}
    if not _FUNCTION_KEYS.issuperset(fn):
        more = {k: v for k, v in fn.items() if k not in _FUNCTION_KEYS and v is not None}
        if more:
            provider = {**(provider or {}), "function": more}
    return provider, fidelity
