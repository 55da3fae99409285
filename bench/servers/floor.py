"""``python -m bench.servers.floor``: the least any asyncio proxy pays, bytes forwarded as they are.

A TCP proxy on asyncio streams: each client connection gets its own connection to
the upstream, and every read on one side is written to the other as it is (no HTTP
parsing, no decoding, no re-encoding). Its CPU per event is what one read and one
write per event cost a Python process on this machine: no gateway written on
asyncio can use less. ``bench.servers`` runs it as the ``floor chat`` path.
"""

from __future__ import annotations

import argparse
import asyncio


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


async def _serve(port: int, upstream_port: int) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_server(connection, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


def main() -> None:
    """Forward 127.0.0.1:``--port`` to 127.0.0.1:``--upstream-port`` until killed."""
    parser = argparse.ArgumentParser(prog="python -m bench.servers.floor")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream-port", type=int, required=True)
    args = parser.parse_args()
    asyncio.run(_serve(args.port, args.upstream_port))


if __name__ == "__main__":
    main()
