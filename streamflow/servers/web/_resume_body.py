"""The body of a resumed answer: a Redis stream's entries as SSE, each event with its ``id:``.

In ``uni``, the events the client has (up to ``Last-Event-ID``) are sent first as
``event: replay`` frames (a fresh streamflow decoder folds them into the message
without delivering them; a browser's ``onmessage`` ignores them). UI encoders
(``vercel-ui``, ``ag-ui``) are stateful, so the stream is re-encoded from its start
and the bytes the client has are skipped; an Agent run's entries are its records
(:func:`~streamflow.wire.dialects.ui_agent.agent_record`), re-encoded the same way.
When one entry encodes to several SSE events, all but its last carry
``<entry id>/<n>`` ids. A failure while reading
(the producer died, entries were trimmed, Redis went away) ends the body with the
protocol's in-band error.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, cast

from ...core.errors import StreamflowError
from ...core.events import JSONDict, UniEvent, event_from_dict
from ...reactive._redis.link import RedisLink
from ...reactive._redis.streams import BEAT, END, EVENT, Entry, entry_id, entry_key, read_batches
from ...reactive._redis.tailer import Tailer
from ...reactive.sources.redis import HEARTBEAT_FRAME, sse_frame
from ...wire.dialects import get_encoder
from ...wire.dialects._frames_out import field_line
from ...wire.dialects.encoder import Encoder
from ...wire.dialects.ui_agent import feed_agent_record
from ...wire.targets._ui_run import UIRunEncoder

Position = tuple[tuple[int, int], int]  # (entry id, SSE event index within the entry)
WHOLE = 1 << 30  # the index of "every event of the entry"


def parse_last_event_id(value: str | None) -> Position | None:
    """``"<entry id>"`` or ``"<entry id>/<n>"`` -> the position it names (``None``: invalid)."""
    if not value:
        return None
    head, _, index = value.strip().partition("/")
    try:
        return entry_key(head), int(index) if index else WHOLE
    except (StreamflowError, ValueError):
        return None


def position_id(position: Position) -> str:
    """The ``id:`` naming ``position`` (written from the parsed numbers, never the raw header)."""
    head = entry_id(position[0])
    return head if position[1] == WHOLE else f"{head}/{position[1]}"


def entry_item(entry: Entry) -> UniEvent | StreamflowError | JSONDict:
    """The UniEvent, the terminal typed error or the Agent run's record stored in an entry."""
    from ...wire.dialects.uni.decode import error_from_dict

    obj = json.loads(entry.data)
    if "error" in obj and "event_type" not in obj:
        return error_from_dict(obj["error"])
    if "agent" in obj and "event_type" not in obj:
        return dict(obj)  # see streamflow.wire.dialects.ui_agent
    return event_from_dict(obj)


def with_ids(chunk: bytes, entry_id: str) -> list[tuple[int, bytes]]:
    """Split an encoder's SSE output into events, each given its ``id:`` (see module doc)."""
    events = [e for e in chunk.split(b"\n\n") if e.strip()]
    out = []
    for index, event in enumerate(events):
        name = entry_id if index == len(events) - 1 else f"{entry_id}/{index}"
        out.append((index, field_line("id", name) + event + b"\n\n"))
    return out


async def sse_body(link: RedisLink, key: str, tailer: Tailer | None, encoder: Encoder | None,
                   last_event_id: str | None) -> AsyncGenerator[bytes, None]:
    """The stream at ``key`` as SSE after ``last_event_id`` (``encoder=None``: ``uni``)."""
    after = parse_last_event_id(last_event_id)
    replay_id = "" if after is None else position_id(after)
    caught_up = after is None
    try:
        async with aclosing(read_batches(link, key, tailer=tailer)) as batches:
            async for batch in batches:
                out = bytearray()
                for entry in batch:
                    if entry.kind == BEAT:
                        if caught_up:
                            out += HEARTBEAT_FRAME
                    elif entry.kind in (EVENT, END) and encoder is None:
                        if after is not None and (entry_key(entry.id), 0) <= after:
                            out += sse_frame(replay_id, entry.data, replay=True)
                        else:
                            caught_up = True
                            out += sse_frame(entry.id, entry.data)
                    elif entry.kind in (EVENT, END) and encoder is not None:
                        position = entry_key(entry.id)
                        item = entry_item(entry)
                        if isinstance(item, StreamflowError):
                            chunk = encoder.fail(item)
                        elif isinstance(item, dict):
                            chunk = feed_agent_record(cast(UIRunEncoder, encoder), item)
                        else:
                            chunk = encoder.feed(item)
                        for index, event in with_ids(chunk, entry.id):
                            if after is None or (position, index) > after:
                                caught_up = True
                                out += event
                if out:
                    yield bytes(out)  # one write per read: fewer sends under load
    except StreamflowError as error:  # the producer died, entries were trimmed, Redis went away
        yield _error_bytes(encoder, error)


def encoder_for(target: str, key: str, chat_id: str, flavour: dict[str, Any]) -> Encoder | None:
    """The UI encoder of ``target`` (``None`` for ``uni``), its ids derived from the stream key
    so every instance writes the same bytes."""
    if target == "uni":
        return None
    stable = uuid.uuid5(uuid.NAMESPACE_URL, key).hex
    if target == "vercel-ui":
        flavour = {"message_id": f"msg_{stable}", **flavour}
    elif target == "ag-ui":
        flavour = {"message_id": f"msg_{stable}", "thread_id": chat_id, "run_id": stable,
                   **flavour}
    return get_encoder(target)(**flavour)


def headers_for(target: str) -> dict[str, str]:
    """The response headers of target ``target``."""
    if target == "vercel-ui":
        from ...wire.targets.vercel_ui.encode import HEADERS

        return dict(HEADERS)
    return {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _error_bytes(encoder: Encoder | None, error: StreamflowError) -> bytes:
    if encoder is None:
        from ...wire.dialects.uni.decode import encode_sse

        return encode_sse(error)
    return b"" if encoder.finished else encoder.fail(error)
