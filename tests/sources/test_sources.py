"""In-memory, async-iterable and file sources; the scope bridge; HTTP error envelopes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamflow
from streamflow import HTTPStatusError, TransportError
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sources import (
    NoScopeError,
    from_async_iterable,
    from_bytes,
    from_file,
    from_iterable,
    scope,
    status_error,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
LONG = (DATA / "long_text.sse").read_bytes()
EXPECTED = streamflow.assemble(TURN, clock=lambda: 1000).to_dict()


def collect_sync(observable: object) -> tuple[list[object], list[Exception], list[bool]]:
    items: list[object] = []
    errors: list[Exception] = []
    done: list[bool] = []
    observable.subscribe(items.append, errors.append, lambda: done.append(True))  # type: ignore[attr-defined]
    return items, errors, done


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200))
def test_from_bytes_any_chunk_size_gives_the_same_message(size: int) -> None:
    message = streamflow.run_sync(from_bytes(TURN, chunk_size=size), clock=lambda: 1000)
    assert message.to_dict() == EXPECTED


def test_sync_sources_push_without_an_event_loop() -> None:
    chunks = [TURN[i:i + 11] for i in range(0, len(TURN), 11)]
    for source in (from_bytes(TURN), from_iterable(chunks), from_iterable(lambda: iter(chunks))):
        items, errors, done = collect_sync(source)
        assert b"".join(items) == TURN  # type: ignore[arg-type]
        assert (errors, done) == ([], [True])


def test_take_stops_a_sync_source_early() -> None:
    pulled: list[int] = []

    def chunks() -> object:
        for i in range(0, len(LONG), 50):
            pulled.append(i)
            yield LONG[i:i + 50]

    import reactivex.operators as ops
    items, _, done = collect_sync(from_iterable(chunks).pipe(pipeline(), ops.take(3)))
    assert len(items) == 3 and done == [True]
    assert len(pulled) < len(LONG) // 50 // 2


def test_async_source_without_a_scope_says_how_to_run_it() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield TURN

    _, errors, _ = collect_sync(from_async_iterable(body))
    assert isinstance(errors[0], NoScopeError)
    assert "streamflow.run" in str(errors[0])


@pytest.mark.anyio
async def test_async_iterable_source_is_closed_when_disposed() -> None:
    closed: list[bool] = []

    async def body() -> AsyncIterator[bytes]:
        try:
            for i in range(0, len(LONG), 64):
                yield LONG[i:i + 64]
                await anyio.sleep(0.001)
        finally:
            closed.append(True)

    got: list[object] = []
    async with scope() as owner:
        subscription = from_async_iterable(body).pipe(pipeline()).subscribe(got.append)
        while len(got) < 3:
            await anyio.sleep(0.001)
        subscription.dispose()
    assert closed == [True] and owner.pumps == 0
    assert 3 <= len(got) < 300


@pytest.mark.anyio
async def test_async_iterable_failure_is_typed() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield TURN[:300]
        raise TransportError("socket reset")

    with pytest.raises(TransportError) as caught:
        await streamflow.run(from_async_iterable(body))
    assert caught.value.partial is not None


@pytest.mark.anyio
async def test_a_fast_replay_yields_to_other_tasks() -> None:
    ticks = 0
    chunks_seen = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    def count(_: object) -> None:
        nonlocal chunks_seen
        chunks_seen += 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        await streamflow.run(from_bytes(LONG, chunk_size=97), count)
        tg.cancel_scope.cancel()
    assert chunks_seen > 300
    assert ticks >= len(LONG) // 97 // 2  # the ticker ran between (about) every chunk


@pytest.mark.anyio
async def test_file_source_and_its_framing_hint(tmp_path: Path) -> None:
    sse = tmp_path / "turn.sse"
    sse.write_bytes(TURN)
    jsonl = tmp_path / "turn.jsonl"
    jsonl.write_text("\n".join(line[6:] for line in TURN.decode().splitlines()
                               if line.startswith("data: ")) + "\n")
    assert from_file(jsonl).framing == "ndjson"
    small = await streamflow.run(from_file(sse, chunk_size=33), clock=lambda: 1000)
    lines = await streamflow.run(from_file(jsonl, chunk_size=33), dialect="anthropic",
                                 clock=lambda: 1000)
    assert small.to_dict() == lines.to_dict() == EXPECTED


@pytest.mark.parametrize(("status", "headers", "body", "expected"), [
    (429, {"Retry-After": "3", "request-id": "req_9"},
     b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
     ("rate_limit_error", "HTTP 429: slow down", 3.0, "req_9")),
    (401, {}, b'{"error":{"message":"bad key","type":"invalid_request_error",'
              b'"code":"invalid_api_key"}}',
     ("invalid_request_error", "HTTP 401: bad key", None, None)),
    (429, {"retry-after-ms": "1500"}, b'{"error":{"code":429,"message":"Provider returned"}}',
     (None, "HTTP 429: Provider returned", 1.5, None)),
    (403, {"x-amzn-errortype": "AccessDeniedException:http://x"},
     b'{"message":"no access"}', ("AccessDeniedException", "HTTP 403: no access", None, None)),
    (500, {}, b"<html>oops</html>", (None, "HTTP 500: <html>oops</html>", None, None)),
    (503, {}, b"", (None, "HTTP 503: Service Unavailable", None, None)),
])
def test_status_error_reads_each_envelope(status: int, headers: dict[str, str], body: bytes,
                                          expected: tuple[object, ...]) -> None:
    error = status_error(status, headers, body)
    assert isinstance(error, HTTPStatusError) and error.status == status
    assert (error.type, error.message, error.retry_after, error.request_id) == expected
    assert error.retryable == (status in (429, 500, 503))
