"""group_by_block(): one replaying observable per content group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import reactivex.operators as ops

from streamflow import ProviderError
from streamflow.reactive.operators import Block, group_by_block, pipeline
from streamflow.reactive.sources import from_bytes

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()


def blocks_of(body: bytes, *more: Any) -> tuple[list[Block], list[Exception]]:
    blocks: list[Block] = []
    errors: list[Exception] = []
    from_bytes(body, chunk_size=13).pipe(pipeline(), *more, group_by_block()).subscribe(
        blocks.append, errors.append)
    return blocks, errors


def items_of(block: Block) -> tuple[list[Any], list[Any]]:
    items: list[Any] = []
    ends: list[Any] = []
    block.subscribe(items.append, ends.append, lambda: ends.append("completed"))
    return items, ends


def test_one_block_per_group_with_its_items_live() -> None:
    live: dict[int, list[str]] = {}
    blocks: list[Block] = []

    def on_block(block: Block) -> None:
        blocks.append(block)
        live[block.index] = []
        block.subscribe(lambda item: live[block.index].append(item.type))

    from_bytes(TURN).pipe(pipeline(), group_by_block()).subscribe(on_block)
    assert [(b.index, b.kind) for b in blocks] == [(0, "thinking"), (1, "text"), (2, "tool_call")]
    assert live[1] == ["text.delta"] * 5 + ["text.done"]
    assert blocks[2].head.name == "get_weather"
    assert blocks[2].done is not None and blocks[2].done.arguments == {"city": "Paris",
                                                                        "units": "metric"}


def test_a_late_subscriber_gets_every_item_and_the_completion() -> None:
    blocks, errors = blocks_of(TURN)
    assert errors == [] and all(b.closed for b in blocks)
    items, ends = items_of(blocks[1])
    assert "".join(i.text for i in items[:-1]) == items[-1].text
    assert ends == ["completed"]
    again, _ = items_of(blocks[1])
    assert again == items


def test_a_subscriber_joining_mid_group_gets_the_buffer_then_the_rest() -> None:
    joined: list[Any] = []

    def on_block(block: Block) -> None:
        if block.kind == "text":
            # subscribe only after the third fragment passed
            block.pipe(ops.skip(0)).subscribe()
            block.items_seen = 0  # type: ignore[attr-defined]

            def count(item: Any) -> None:
                block.items_seen += 1  # type: ignore[attr-defined]
                if block.items_seen == 3:
                    block.subscribe(joined.append)
            block.subscribe(count)

    from_bytes(TURN).pipe(pipeline(), group_by_block()).subscribe(on_block)
    assert [i.text for i in joined] == ["Let me ", "check ", "the weather ", "in Paris ",
                                        "— un instant.",
                                        "Let me check the weather in Paris — un instant."]


def test_an_error_reaches_the_open_block_and_late_subscribers() -> None:
    blocks, errors = blocks_of((DATA / "error_after_text.sse").read_bytes())
    assert isinstance(errors[0], ProviderError)
    items, ends = items_of(blocks[0])
    assert [i.text for i in items] == ["Partial ", "answer"]
    assert ends == [errors[0]] and blocks[0].done is None


def test_a_stream_cut_by_take_completes_the_open_block_without_done() -> None:
    blocks, _ = blocks_of(TURN, ops.take(6))
    assert [b.kind for b in blocks] == ["thinking", "text"]
    items, ends = items_of(blocks[1])
    assert len(items) == 2 and ends == ["completed"] and blocks[1].done is None
