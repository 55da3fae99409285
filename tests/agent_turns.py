"""Recorded model turns for the agent tests: Emitter-built bodies the replay server plays."""

from __future__ import annotations

import json
from typing import Any

from streamflow.core.events import Usage
from streamflow.servers.replay import Route
from streamflow.wire.dialects._emitter import Emitter
from streamflow.wire.encoding import encode


def turn(*calls: tuple[str, str, dict[str, Any]], text: str = "", tokens: int = 10,
         delays: float = 0.0, dialect: str = "anthropic") -> Route:
    """One turn: some ``text``, then ``calls`` (name, id, arguments); ``tool_call`` if any."""
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test"} if dialect == "anthropic" else
            {"id": "chatcmpl-1", "model": "gpt-test"})
    if text:
        em.text(text)
    for name, call_id, arguments in calls:
        em.tool_call(json.dumps(arguments), name=name, tool_call_id=call_id, new=True)
    em.stop(Usage(prompt_tokens=tokens, response_tokens=tokens // 2),
            "tool_call" if calls else "stop")
    return Route(chunks=list(encode(em.drain(), dialect)), delays=delays)
