"""Fault injection: take any recording, break it the way production breaks, test your app.

Streams die halfway: an overloaded provider after ``200 OK``, a proxy cutting an
idle socket, a connection reset in the middle of a tool call's JSON. These faults
reproduce that on any recorded body, for any dialect:

* ``Cut(n)`` / ``Cut(n, reset=True)`` -- the body ends after ``n`` bytes (EOF / dropped socket)
* ``DropTerminator(dialect)`` -- no ``message_stop`` / ``[DONE]`` / ``response.completed``...
* ``Duplicate(i)`` / ``Swap(i)`` -- chunk ``i`` twice / chunks ``i`` and ``i+1`` reordered
* ``ByEvent(framing)`` -- one chunk per framed event (then ``Duplicate`` hits a whole event)
* ``InsertError(dialect, after=k)`` -- the provider's own in-band error after event ``k``
* ``Stall(seconds, before=i)`` -- nothing on the wire for a while (idle timeouts)
* ``Drip()`` -- one byte per chunk

What each fault gives is in ``docs/FAULTS.md``: the typed
error it gives, and what is kept on ``error.partial``.

Pure, on chunk lists (no event loop; markers :class:`Pause`/:class:`Reset` are
dropped by :func:`payload`)::

    from streamflow import assemble, IncompleteStreamError
    from streamflow.faults import Cut, apply, payload, mid_char_offset

    body = open("turn.sse", "rb").read()
    broken = apply([body], Cut(mid_char_offset(body, 200)))
    try:
        assemble(payload(broken))
    except IncompleteStreamError as exc:
        show(exc.partial.text)           # everything that arrived is kept

Over a real socket, with the loopback replay server (stalls and resets work here)::

    from streamflow.faults import InsertError, Stall, fault_route
    from streamflow.servers.replay import ReplayServer

    route = fault_route(body, InsertError("anthropic", after=5), Stall(2.0, before=3))
    async with ReplayServer({"/v1/messages": route}) as server:
        ...  # point your app's base_url at server.url

As a reactivex operator over any byte observable, or as a source for ``run()``::

    from streamflow.faults import Drip, DropTerminator, faulty_source, inject

    chunks_observable.pipe(inject(Drip(), DropTerminator("openai-chat")))
    await streamflow.run(faulty_source(body, Cut(1000, reset=True)), *sinks)

Faults apply in the order given; each subscription gets fresh state.
"""

from __future__ import annotations

from .chunks import (
    Chunk,
    EventSplitter,
    Pause,
    Reset,
    body,
    mid_char_offset,
    mid_event_offset,
    payload,
    split_events,
)
from .dialect_faults import DropTerminator, InsertError
from .functions import by_event, cut, drip, drop_terminator, duplicate, insert_error, stall, swap
from .operators import inject
from .profiles import PROFILES, ErrorSpec, Profile, profile_for
from .recipes import (
    ByEvent,
    Cut,
    Drip,
    Duplicate,
    Fault,
    FaultState,
    Stall,
    Swap,
    apply,
    iter_apply,
)
from .serve import FaultySource, fault_route, faulty_source, play

__all__ = [
    "PROFILES",
    "ByEvent",
    "Chunk",
    "Cut",
    "Drip",
    "DropTerminator",
    "Duplicate",
    "ErrorSpec",
    "EventSplitter",
    "Fault",
    "FaultState",
    "FaultySource",
    "InsertError",
    "Pause",
    "Profile",
    "Reset",
    "Stall",
    "Swap",
    "apply",
    "body",
    "by_event",
    "cut",
    "drip",
    "drop_terminator",
    "duplicate",
    "fault_route",
    "faulty_source",
    "inject",
    "insert_error",
    "iter_apply",
    "mid_char_offset",
    "mid_event_offset",
    "payload",
    "play",
    "profile_for",
    "split_events",
    "stall",
    "swap",
]
