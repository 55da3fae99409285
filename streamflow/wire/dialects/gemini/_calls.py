"""Gemini ``functionCall`` parts: whole calls, and calls streamed in ``partialArgs``.

A whole call is one ``tool_call`` group; a streamed one (``partialArgs`` +
``willContinue``) becomes JSON text fragments written by
:class:`~streamflow.wire.dialects.gemini._args.ArgsWriter`, while other parts of its
candidate are held until it ends (the mapping is described in
:mod:`streamflow.wire.dialects.gemini.decode`). Parts that map onto no item are kept whole.
"""

from __future__ import annotations

import json

from ....core.errors import ProtocolError
from ....core.events import JSONDict, ToolCallItem
from .._readers import expect_str
from ..base import Emitter
from ._args import ArgsWriter
from ._candidate import Candidate

_CALL_KEYS = frozenset({"name", "id", "args", "partialArgs", "willContinue"})


class CallsMixin:
    """Function calls and kept parts of a Gemini stream (for GeminiDecoder)."""

    emitter: Emitter
    _rid: str

    def _part(self, c: Candidate, part: JSONDict) -> None:
        """Map one part of candidate ``c`` (defined by the decoder)."""
        raise NotImplementedError

    def _keep(self, c: Candidate, part: JSONDict) -> None:
        c.close()
        self.emitter.keep("extra_parts", {"candidate_index": c.index, "item_index": c.groups,
                                          "part": part})

    def _call(self, c: Candidate, fc: JSONDict, fid: JSONDict | None, extras: JSONDict | None,
              part: JSONDict) -> None:
        name = expect_str(fc.get("name"), "functionCall.name")
        partial = fc.get("partialArgs")
        if partial is not None and type(partial) is not list:
            raise ProtocolError("gemini functionCall.partialArgs must be a list")
        more = fc.get("willContinue") is True
        provider = {**(extras or {}), **{k: v for k, v in fc.items() if k not in _CALL_KEYS}}
        if c.writer is not None:  # the next piece of the streaming call
            for key, known in (("name", c.head[0]), ("id", c.head[1]), ("args", None)):
                if fc.get(key) and fc[key] != known:  # kept, never dropped
                    provider[key] = fc[key]
            if fid and c.sig:
                provider["thought_signatures"] = [fid["thought_signature"]]
                fid = None
            text = "".join(c.writer.feed(p) for p in partial or [])
            if text or fid or provider:
                c.put(ToolCallItem("tool_call.delta", "", "", text, fid, provider or None))
            if not more:
                self._end_call(c)
            return
        if not (name or partial or fc.get("args") or more):
            self._keep(c, part)  # an empty end marker with no call open
            return
        call_id = expect_str(fc.get("id"), "functionCall.id")
        if not call_id:
            call_id = f"call_{self._rid or 'gemini'}_{c.index}_{c.calls}"
            provider["synthetic_id"] = True
        c.calls += 1
        if partial is None and not more:
            args = fc.get("args")
            text = json.dumps({} if args is None else args, ensure_ascii=False)
            c.put(ToolCallItem("tool_call.delta", name, call_id, text, fid, provider or None),
                  new=True)
            c.close()
            return
        c.writer, c.head = ArgsWriter(), (name, call_id)
        text = c.writer.start() + "".join(c.writer.feed(p) for p in partial or [])
        c.put(ToolCallItem("tool_call.delta", name, call_id, text, fid, provider or None),
              new=True)
        if not more:
            self._end_call(c)

    def _end_call(self, c: Candidate) -> None:
        assert c.writer is not None
        c.put(ToolCallItem("tool_call.delta", "", "", c.writer.close()))
        c.writer = None
        c.close()
        after, c.after = c.after, []
        for part in after:
            self._part(c, part)
