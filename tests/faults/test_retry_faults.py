"""The retry policy (``on_error("retry")``) against injected faults on the loopback server.

Retry only what is retryable (429, 5xx, overloaded, drops before any output), with
exponential backoff raised to ``retry-after``; never once output reached the user,
unless asked -- then the app is told exactly how many items to discard.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from fault_bodies import EXPECTED_TEXT, body_for
from fault_cases import text_event

import streamflow
from streamflow import HTTPStatusError, ProviderError, TransportError, UniEvent
from streamflow.faults import Cut, ErrorSpec, InsertError, fault_route, mid_event_offset
from streamflow.reactive.operators import StreamRestart, on_error, pipeline
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route, split_odd

pytestmark = pytest.mark.anyio
BODY = body_for("anthropic")
GOOD = Route.from_body(BODY)
AFTER_TEXT = text_event("anthropic", BODY, 2) + 1
OVERLOADED_AFTER_OUTPUT = fault_route(split_odd(BODY), InsertError("anthropic", AFTER_TEXT))


class Sleeps:
    """An injected sleep: records each backoff delay, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await anyio.lowlevel.checkpoint()


async def run_with_retry(answers: list[Route], *sinks: Any,
                         **policy: Any) -> tuple[Any, list[float], int]:
    """Outcome (message or error), backoff delays, and how many requests the server saw."""
    sleeps = Sleeps()
    async with ReplayServer({"/v1/messages": answers}) as server, \
            httpx.AsyncClient() as client:
        source = from_httpx(
            client, lambda: client.build_request("POST", server.url + "/v1/messages"))
        chain = source.pipe(pipeline("anthropic"), on_error("retry", sleep=sleeps, **policy))
        try:
            outcome: Any = await streamflow.run(chain, *sinks)
        except streamflow.StreamflowError as exc:
            outcome = exc
    return outcome, sleeps.delays, len(server.hits)


async def test_429_with_retry_after_then_success_is_exactly_two_requests() -> None:
    busy = Route.error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                      "message": "slow down"}},
                       headers={"retry-after": "3"})
    message, delays, requests = await run_with_retry([busy, GOOD])
    assert requests == 2 and delays == [3.0]  # retry-after beats the 0.5 s first backoff
    assert message.complete and message.text == EXPECTED_TEXT


async def test_backoff_doubles_between_attempts() -> None:
    down = Route.error(503, {"error": {"message": "down", "type": "server_error"}})
    message, delays, requests = await run_with_retry([down, down, GOOD], max_attempts=3)
    assert (requests, delays) == (3, [0.5, 1.0]) and message.complete


async def test_400_is_not_retried() -> None:
    bad = Route.error(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                     "message": "bad"}})
    error, delays, requests = await run_with_retry([bad, GOOD])
    assert isinstance(error, HTTPStatusError) and error.status == 400 and not error.retryable
    assert (requests, delays) == (1, [])


async def test_non_retryable_in_band_error_before_output_is_not_retried() -> None:
    invalid = fault_route(BODY, InsertError("anthropic", 1, ErrorSpec(
        400, "invalid_request_error", "prompt is too long")))
    error, _, requests = await run_with_retry([invalid, GOOD])
    assert isinstance(error, ProviderError) and error.type == "invalid_request_error"
    assert requests == 1


async def test_a_cut_before_any_output_is_retried_transparently() -> None:
    seen: list[Any] = []
    cut = fault_route(BODY, Cut(mid_event_offset(BODY, 1)))  # inside the ping after message_start
    message, delays, requests = await run_with_retry([cut, GOOD], seen.append)
    assert requests == 2 and len(delays) == 1 and message.text == EXPECTED_TEXT
    assert not any(isinstance(i, StreamRestart) for i in seen)


async def test_overloaded_after_output_is_not_retried_by_default() -> None:
    seen: list[Any] = []
    error, delays, requests = await run_with_retry([OVERLOADED_AFTER_OUTPUT, GOOD], seen.append)
    assert isinstance(error, ProviderError) and error.retryable  # retryable, but output went out
    assert (requests, delays) == (1, [])
    assert error.partial is not None and error.partial.text == "Grüße aus Köln — "
    assert seen and all(isinstance(e, UniEvent) and e.event_type == "delta" for e in seen)


async def test_a_reset_after_output_is_not_retried_by_default() -> None:
    reset = fault_route(BODY, Cut(mid_event_offset(BODY, AFTER_TEXT), reset=True))
    error, _, requests = await run_with_retry([reset, GOOD])
    assert isinstance(error, TransportError) and requests == 1


async def test_opt_in_restart_after_output_says_what_to_discard() -> None:
    seen: list[Any] = []
    message, delays, requests = await run_with_retry(
        [OVERLOADED_AFTER_OUTPUT, GOOD], seen.append, after_output=True)
    assert requests == 2 and len(delays) == 1
    restarts = [i for i, item in enumerate(seen) if isinstance(item, StreamRestart)]
    assert len(restarts) == 1
    at = restarts[0]
    notice = seen[at]
    assert notice.discard == at and notice.attempt == 2  # everything before it is void
    assert isinstance(notice.error, ProviderError)
    # what the app keeps after discarding is exactly one clean stream
    kept = seen[at + 1:]
    assert [e.event_type for e in kept].count("stop") == 1 and kept[-1].event_type == "stop"
    assert message.complete and message.text == EXPECTED_TEXT
