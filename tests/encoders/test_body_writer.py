"""The one encode routine: every entry point ends a body the same way, a cut one included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import reactivex

import streamflow
from streamflow import IncompleteStreamError, StreamflowError
from streamflow.core.events import UniEvent
from streamflow.reactive.operators import encode as encode_op
from streamflow.wire.dialects import DIALECTS, ENCODERS, get_encoder
from streamflow.wire.dialects.encoder import BodyWriter

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
EVENTS = list(streamflow.StreamDecoder("anthropic").feed(TURN))
CUT = [e for e in EVENTS if e.event_type != "stop"]
TARGETS = sorted(ENCODERS)


def through_encode(events: list[UniEvent], target: str) -> tuple[bytes, Exception | None]:
    chunks: list[bytes] = []
    try:
        for chunk in streamflow.encode(events, target):
            chunks.append(chunk)
    except StreamflowError as error:
        return b"".join(chunks), error
    return b"".join(chunks), None


def through_operator(events: list[UniEvent], target: str) -> tuple[bytes, Exception | None]:
    chunks: list[bytes] = []
    errors: list[Exception] = []
    reactivex.from_iterable(events).pipe(encode_op(target)).subscribe(
        chunks.append, errors.append)
    return b"".join(chunks), errors[0] if errors else None


def test_the_cut_stream_really_has_no_stop() -> None:
    assert EVENTS[-1].event_type == "stop" and CUT and CUT[-1].event_type != "stop"


@pytest.mark.parametrize("target", TARGETS)
def test_events_without_stop_end_with_the_in_band_error_then_raise_everywhere(
        target: str) -> None:
    whole, _ = through_encode(CUT, target)
    events_only = BodyWriter(get_encoder(target)()).feed_all(CUT)
    for body, error in (through_encode(CUT, target), through_operator(CUT, target)):
        assert isinstance(error, IncompleteStreamError)
        assert len(body) > len(events_only)  # an in-band error follows the events' bytes
        assert len(body) == len(whole)
        if target in DIALECTS:  # a decoder of the target reads the error, never a clean end
            with pytest.raises(StreamflowError) as info:
                streamflow.assemble(body, target)
            assert info.value.partial is not None
            assert info.value.partial.text == streamflow.assemble(TURN).text


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_stream_ends_with_the_terminator_and_no_error_everywhere(target: str) -> None:
    for body, error in (through_encode(EVENTS, target), through_operator(EVENTS, target)):
        assert error is None
        if target in DIALECTS:
            assert streamflow.assemble(body, target).text == streamflow.assemble(TURN).text


def test_a_failure_writes_the_events_decoded_before_it_then_the_error() -> None:
    writer = BodyWriter(get_encoder("anthropic")())
    error = IncompleteStreamError("cut")
    body = writer.feed(CUT[0]) + writer.fail(error, CUT[1:])
    assert writer.finished and writer.fail(error) == b""  # the body ended once
    with pytest.raises(StreamflowError) as info:
        streamflow.assemble(body, "anthropic")
    assert info.value.partial is not None
    assert info.value.partial.text == streamflow.assemble(TURN).text


def test_a_finished_ui_run_ends_without_an_error_and_an_open_turn_with_one() -> None:
    done = BodyWriter(get_encoder("vercel-ui")(run=True))
    done.feed_all(EVENTS)
    tail, error = done.end()
    assert error is None and b'"type":"finish"' in tail
    cut = BodyWriter(get_encoder("vercel-ui")(run=True))
    cut.feed_all(CUT)
    tail, error = cut.end()
    assert isinstance(error, IncompleteStreamError) and b'"type":"error"' in tail


@pytest.mark.anyio
async def test_async_batches_end_the_same_way() -> None:
    async def batches() -> Any:
        yield CUT[:2]
        yield CUT[2:]

    chunks: list[bytes] = []
    with pytest.raises(IncompleteStreamError):
        async for chunk in BodyWriter(get_encoder("openai-chat")()).abody(batches()):
            chunks.append(chunk)
    assert len(b"".join(chunks)) == len(through_encode(CUT, "openai-chat")[0])
    assert b"".join(chunks).endswith(b"\n\n") and b"IncompleteStreamError" in chunks[-1]


async def _web_body(events: list[UniEvent]) -> bytes:
    import anyio

    from streamflow.servers.web import Outbox
    from streamflow.servers.web._drive import produce

    outbox = Outbox()
    encoder = get_encoder("vercel-ui")(run=True)
    async with anyio.create_task_group() as tg:
        async def producer() -> None:
            try:
                await produce(events, encoder, outbox)  # type: ignore[arg-type]
            finally:
                outbox.close()

        tg.start_soon(producer)
        return b"".join([chunk async for chunk in outbox])


@pytest.mark.anyio
async def test_the_web_responses_end_a_cut_stream_in_band_and_a_whole_one_finished() -> None:
    pytest.importorskip("starlette")
    cut, whole = await _web_body(CUT), await _web_body(EVENTS)
    assert b'"type":"error"' in cut and b'"type":"finish"' not in cut
    assert b'"type":"finish"' in whole and b'"type":"error"' not in whole


@pytest.mark.parametrize("target", TARGETS)
def test_a_bug_upstream_writes_nothing_and_passes_through_the_operator(target: str) -> None:
    """A non-streamflow exception is our bug, not bad input: no in-band error is written
    for it (the body is not made to look like the provider failed), and it reaches the
    subscriber as itself."""
    bug = ZeroDivisionError("a bug upstream")
    chunks: list[bytes] = []
    errors: list[Exception] = []
    reactivex.concat(reactivex.from_iterable(CUT[:3]), reactivex.throw(bug)).pipe(
        encode_op(target)).subscribe(chunks.append, errors.append)
    writer = BodyWriter(get_encoder(target)())
    head = [c for c in (writer.feed(e) for e in CUT[:3]) if c]
    assert errors == [bug] and len(chunks) == len(head)  # the events' bytes, nothing more
    assert b"error" not in b"".join(chunks).lower()
    assert writer.close(bug) == (b"", bug) and not writer.finished
