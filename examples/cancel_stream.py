"""Cancel a stream with Ctrl-C: the connection closes and the server sees it go.

Streams a long answer slowly from the replay server. After ``--seconds`` (default
3), or when you press Ctrl-C first, ``run()`` is cancelled, which disposes the subscription, cancels
the reader task and closes the HTTP response -- the only signal a provider sees.
"""

import sys

import anyio
import httpx
from _body import long_body

import streamflow
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route


async def main(seconds: float) -> None:
    started = anyio.Event()

    def show(event: streamflow.UniEvent) -> None:
        if event.event_type == "delta" and event.content_items[0].type == "text.delta":
            if not started.is_set():
                print(f"streaming... (stops after {seconds:g} s, or Ctrl-C)", flush=True)
                started.set()
            print(event.content_items[0].text, end="", flush=True)

    async with ReplayServer(Route.from_body(long_body(), delays=0.01)) as server, \
            httpx.AsyncClient() as client:
        request = client.build_request("POST", server.url + "/v1/messages")
        try:
            async with anyio.create_task_group() as tg:
                async def stop_later() -> None:
                    await started.wait()
                    await anyio.sleep(seconds)
                    tg.cancel_scope.cancel()
                tg.start_soon(stop_later)
                await streamflow.run(from_httpx(client, request), show)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await server.wait_disconnect()
            seen = any(hit.disconnected for hit in server.hits)
            print(f"\ncancelled; server observed disconnect: {seen}", flush=True)


if __name__ == "__main__":
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 3
    try:
        anyio.run(main, seconds)
    except KeyboardInterrupt:
        print("bye", flush=True)
