"""Every fault, every dialect, in memory: one typed error with the partial message, no stop.

The sans-IO core (``StreamDecoder``) and ``run()`` over an in-memory faulty source
(asyncio and trio) must agree. The same cases over a real socket are in
test_fault_http.py; duplicate/reorder outcomes are pinned down per event in
test_fault_reorder.py.
"""

from __future__ import annotations

import pytest
from fault_bodies import available, body_for
from fault_cases import (
    CASES,
    check_outcome,
    decode_in_memory,
    items,
    live_tasks,
    sans_io_chunks,
    settle,
)

import streamflow
from streamflow import IncompleteStreamError, StreamflowError, TransportError
from streamflow.faults import faulty_source
from streamflow.servers.replay import split_odd

MATRIX = [(d, name) for d in available() for name in CASES]


@pytest.mark.parametrize(("dialect", "name"), MATRIX)
def test_fault_in_the_sans_io_core(dialect: str, name: str) -> None:
    make, expect = CASES[name]
    body = body_for(dialect)
    chunks = sans_io_chunks(dialect, body, make(dialect, body))
    expected = expect(dialect)
    if expected is TransportError:  # without a socket a reset is just the end of the bytes
        expected = CASES["cut_mid_event"][1](dialect)
    events, outcome = decode_in_memory(dialect, chunks)
    check_outcome(dialect, name, events, outcome, expected)


@pytest.mark.anyio
@pytest.mark.parametrize(("dialect", "name"), MATRIX)
async def test_fault_through_run_in_memory(dialect: str, name: str) -> None:
    make, expect = CASES[name]
    body = body_for(dialect)
    faults = make(dialect, body)
    seen: list[object] = []
    baseline = await live_tasks(0.02)  # let started tasks start
    try:
        outcome: object = await streamflow.run(faulty_source(split_odd(body), *faults),
                                               seen.append, dialect=dialect)
    except StreamflowError as exc:
        outcome = exc
    check_outcome(dialect, name, seen, outcome, expect(dialect))
    assert await settle(baseline) == set()
    # the same bytes through the sans-IO core give the same partial message
    _, reference = decode_in_memory(dialect, sans_io_chunks(dialect, body, faults))
    got = outcome.partial if isinstance(outcome, StreamflowError) else outcome
    ref = reference.partial if isinstance(reference, StreamflowError) else reference
    assert got is not None and ref is not None and items(got) == items(ref)


def test_assemble_attaches_the_partial_to_the_error() -> None:
    body = body_for("anthropic")
    with pytest.raises(IncompleteStreamError) as caught:
        streamflow.assemble(body[: body.index("Köln".encode())])
    partial = caught.value.partial
    assert partial is not None and partial.text == "Grüße aus "
    assert [i.type for i in partial.items] == ["thinking.done", "text.delta"]
