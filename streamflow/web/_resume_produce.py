"""The producer side of :class:`~streamflow.web.resume.ResumableStreams`: an answer into Redis.

:func:`launch` keeps (or issues) the chat's token, starts the stream's
:class:`~streamflow.sinks.RedisStreamSink` (its ``start`` entry is written before it
returns), points the chat at the new stream and starts the producer in the app's
task group: :func:`produce`, the one producer, for a byte or UniEvent source and for
an Agent run alike (one entry per record, ``run.end`` the last one): stoppable from any
instance through the stop key, bounded by the deadline, ``on_finish`` called once.
"""

from __future__ import annotations

import json
import uuid
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._redis.link import RedisLink
from ..agent import AgentEvent
from ..dialects.ui_agent import agent_record
from ..errors import CancelledStreamError, SinkError, StreamflowError, StreamTimeoutError
from ..limits import Limits
from ..redaction import redacting_logger
from ..runtime import run
from ..sinks.redis import RedisStreamSink
from ._answer import AnswerRecorder, FinishStatus, call_on_finish
from ._drive import AgentRun, run_agent
from ._resume_access import Slot, Started, point, token_to_keep
from ._resume_stop import stop_key, until_stopped

if TYPE_CHECKING:
    from .resume import ResumableStreams

log = redacting_logger("streamflow.web.resume")  # no credential in a line


async def launch(streams: ResumableStreams, group: TaskGroup, chat_id: str, source: Any,
                 token: str | None, slot: Slot, dialect: str,
                 options: dict[str, Any]) -> Started:
    """Start a fresh answer of ``chat_id`` (checked) in ``group``; the chat points at it."""
    link = streams.link
    pointer, token_key = streams._keys(chat_id)
    if streams.tokens:
        token = await token_to_keep(link, token_key, token)
    key = f"{streams.prefix}stream:{chat_id}:{uuid.uuid4().hex}"
    sink = RedisStreamSink(streams.url, key, maxlen=streams.maxlen, ttl=streams.ttl,
                           heartbeat=streams.heartbeat, link=link)
    await sink.start(group)
    life = max(86400, int(streams.ttl))
    try:
        await point(link, pointer, key, life, token_key, token if streams.tokens else None)
    except BaseException:
        await sink.aclose()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await link.call("delete", key)  # nobody can reach it: do not keep it
            except StreamflowError:
                pass  # it expires with the sink's ttl
        raise
    group.start_soon(produce, sink, source, dialect, options, slot, link,
                     stop_key(streams.prefix, key), streams.limits,
                     name=f"streamflow-producer:{key}")
    return Started(chat_id, key, token if streams.tokens else None)


async def produce(sink: RedisStreamSink, source: Any, dialect: str, options: dict[str, Any],
                  slot: Slot, link: RedisLink, stop_key: str, limits: Limits) -> None:
    """Run ``source`` -- a byte or UniEvent source, or an :class:`AgentRun` (one entry per
    record, ``run.end`` the last) -- into ``sink`` until it ends or ``stop_key`` appears;
    then ``on_finish``, once, with what the readers saw and how it ended."""
    on_finish = options.pop("_on_finish", None)
    recorder = AnswerRecorder()
    status: FinishStatus = "aborted"  # unless the run ends by itself
    stopped = False

    async def write_record(ev: AgentEvent) -> None:
        record = agent_record(ev)
        if record is not None:
            await sink.on_record(json.dumps(record, separators=(",", ":")),
                                 last=record["agent"] == "run.end")

    async def drive() -> None:
        if not isinstance(source, AgentRun):
            await run(source, sink, recorder, dialect=dialect, limits=limits, **options)
            return
        try:
            with anyio.fail_after(limits.deadline) if limits.deadline else nullcontext():
                await run_agent(source, write_record, (recorder,))
        except TimeoutError:
            error = StreamTimeoutError("deadline", limits.deadline or 0.0)
            await recorder.on_end(error)
            raise error from None

    async def work() -> None:
        nonlocal status
        try:
            await drive()
            status = "failed" if recorder.answer.error is not None else "completed"
        except SinkError as error:  # Redis failed under the producer: readers time out
            status = "failed"
            log.warning("writing %s to Redis failed: %s", sink.key, error)
        except StreamflowError as error:
            status = "failed"
            await sink.on_end(error)  # the terminal entry (written already by a run)
        except Exception:
            log.exception("producer of %s failed", sink.key)
            raise

    try:
        stopped = await until_stopped(link, stop_key, work)
    finally:
        slot.release()
        with anyio.CancelScope(shield=True):
            if stopped and not sink.finished:
                try:
                    await sink.on_end(CancelledStreamError("the answer was stopped"))
                except StreamflowError as error:
                    log.warning("ending %s failed: %s", sink.key, error)
            await sink.aclose()
            try:
                await call_on_finish(on_finish, recorder.finish(), status)
            except Exception:
                log.exception("on_finish of %s failed", sink.key)
