"""Errors always surface, never hang: each failure reproduced in issue 11, section 2.

* an exception in a ``Block`` subscriber -> ``run()`` raises ``SinkError`` at once and
  the request is closed (it used to wait forever);
* under ``async with scope():`` with ``subscribe(on_next=...)`` only, a stream's
  ``ProviderError`` or a failing ``Block`` subscriber is raised from the scope's exit
  (it used to vanish, exit code 0);
* ``async with ReplayServer(...)`` lets the block's error out as itself (it used to be
  an ``ExceptionGroup``);
* wrong inputs are ``TypeError``s naming what is accepted; a body of another dialect
  suggests ``dialect="auto"``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import reactivex

import streamflow
from streamflow import IncompleteStreamError, ProtocolError, ProviderError, SinkError
from streamflow.reactive.operators import Block, group_by_block, pipeline
from streamflow.reactive.sinks import BaseSink
from streamflow.reactive.sources import from_bytes, from_httpx
from streamflow.servers.replay import ReplayServer, Route

DATA = Path(__file__).resolve().parent / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
LONG = (DATA / "long_text.sse").read_bytes()
BROKEN = (DATA / "error_after_text.sse").read_bytes()
OPENAI = (Path(__file__).resolve().parent / "data" / "openai_chat" / "refusal.sse").read_bytes()


class Panes(BaseSink):
    """A per-block UI whose pane code has a bug."""

    def on_next(self, block: Block) -> None:
        block.subscribe(on_next=lambda item: 1 / 0)


@pytest.mark.anyio
async def test_a_failing_block_subscriber_makes_run_raise_sink_error_and_close() -> None:
    async with ReplayServer(Route.from_body(LONG, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        events = from_httpx(client, request).pipe(pipeline("anthropic"))
        with anyio.fail_after(5):
            with pytest.raises(SinkError) as caught:
                await streamflow.run(events.pipe(group_by_block()), Panes())
            hit = await server.wait_disconnect()
    assert isinstance(caught.value.errors[0][1], ZeroDivisionError)
    assert not hit.completed  # closed mid-body, not read to the end


@pytest.mark.anyio
async def test_scope_raises_a_stream_error_nobody_handled() -> None:
    seen: list[Any] = []
    with anyio.fail_after(5), pytest.raises(ProviderError):
        async with streamflow.scope():
            from_bytes(BROKEN).pipe(pipeline()).subscribe(on_next=seen.append)
    assert seen  # the events before the error were delivered


@pytest.mark.anyio
async def test_scope_raises_a_failing_block_subscriber_and_stops_the_read() -> None:
    async with ReplayServer(Route.from_body(LONG, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        blocks = from_httpx(client, request).pipe(pipeline(), group_by_block())
        with anyio.fail_after(5), pytest.raises(SinkError):
            async with streamflow.scope():
                blocks.subscribe(on_next=lambda b: b.subscribe(on_next=lambda i: 1 / 0))
                await anyio.sleep_forever()  # cancelled by the error: never hangs
        assert not (await server.wait_disconnect()).completed


@pytest.mark.anyio
async def test_scope_raises_through_a_base_sink_that_does_not_handle_errors() -> None:
    class Panes(BaseSink):  # the pattern of examples/per_block_ui.py
        def on_next(self, block: Block) -> None:
            block.subscribe(on_next=lambda item: None)

    with anyio.fail_after(5), pytest.raises(ProviderError):
        async with streamflow.scope():
            from_bytes(BROKEN).pipe(pipeline(), group_by_block()).subscribe(Panes())


@pytest.mark.anyio
async def test_a_handled_error_is_not_raised_again() -> None:
    errors: list[Exception] = []
    async with streamflow.scope():
        from_bytes(BROKEN).pipe(pipeline()).subscribe(on_error=errors.append)
    assert isinstance(errors[0], ProviderError)


@pytest.mark.anyio
async def test_replay_server_lets_the_single_error_out() -> None:
    with pytest.raises(ProviderError):
        async with ReplayServer(Route.from_body(BROKEN)) as server, \
                httpx.AsyncClient() as client:
            request = client.build_request("POST", server.url + "/v1/messages")
            await streamflow.run(from_httpx(client, request))
    try:
        async with ReplayServer(Route.from_body(TURN)):
            raise KeyError("app")
    except KeyError:
        pass


@pytest.mark.anyio
async def test_run_rejects_what_is_not_a_source() -> None:
    with pytest.raises(TypeError, match="from_httpx"):
        await streamflow.run(httpx.Request("POST", "http://127.0.0.1/"))
    with pytest.raises(TypeError, match="str"):
        await streamflow.run("data: {}")
    with pytest.raises(TypeError, match="accepts"):
        await streamflow.run(3.5)
    message = await streamflow.run(TURN)  # a body in memory is a source
    assert message.complete


@pytest.mark.anyio
async def test_run_over_blocks_names_the_real_cause() -> None:
    events = streamflow.StreamDecoder().feed(TURN)  # UniEvents with no decoder in the chain
    blocks = reactivex.from_iterable(events).pipe(group_by_block())
    with pytest.raises(TypeError, match="Block items and no UniEvent"):
        await streamflow.run(blocks)
    with pytest.raises(TypeError, match="Block items"):
        streamflow.run_sync(blocks)
    # pipeline() upstream changes nothing: run() assembles what reaches it (no decoder is
    # handed over behind the scenes), so Blocks get the same error and its hint
    decoded = from_bytes(TURN).pipe(pipeline(), group_by_block())
    with pytest.raises(TypeError, match="apply group_by_block\\(\\) inside a sink"):
        await streamflow.run(decoded)


def test_assemble_rejects_a_str_body() -> None:
    with pytest.raises(TypeError, match=r"body.encode\(\)"):
        streamflow.assemble("data: {}\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str chunk"):
        streamflow.assemble(["data: {}\n\n"])  # type: ignore[list-item]


def test_a_body_of_another_dialect_suggests_auto() -> None:
    with pytest.raises(ProtocolError, match='dialect="auto"') as caught:
        streamflow.assemble(OPENAI, "anthropic")
    assert "'anthropic'" in caught.value.message
    with pytest.raises(IncompleteStreamError, match='dialect="auto"'):  # frames it ignores
        streamflow.run_sync(from_bytes(TURN), dialect="openai-chat")
    assert streamflow.assemble(OPENAI).complete  # auto reads it


def test_a_broken_pipe_ends_a_script_instead_of_hanging(tmp_path: Path) -> None:
    script = tmp_path / "head.py"
    script.write_text(
        "import sys, anyio, streamflow\n"
        "from streamflow.reactive.operators import group_by_block, pipeline\n"
        "from streamflow.reactive.sources import from_bytes\n"
        f"body = open({str(DATA / 'long_text.sse')!r}, 'rb').read()\n"
        "def pane(block):\n"
        "    block.subscribe(on_next=lambda item: print(item.type, flush=True))\n"
        "async def main():\n"
        "    events = from_bytes(body, chunk_size=64).pipe(pipeline())\n"
        "    await streamflow.run(events.pipe(group_by_block()), pane)\n"
        "anyio.run(main)\n")
    proc = subprocess.Popen(f"{sys.executable} {script} | head -n 2", shell=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=60)
    assert out.splitlines() == ["text.delta", "text.delta"]
