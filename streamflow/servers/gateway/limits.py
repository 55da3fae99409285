"""What the gateway accepts from a client before anything goes upstream.

:class:`GatewayLimits` holds the bounds (documented in ``docs/SECURITY.md``);
:func:`read_body` reads an ASGI request body in the chunks the server hands over,
counting them, so a body over ``max_body_bytes`` is refused (413) while it is
read, before it is all in memory, and a body that does not arrive within
``body_timeout`` is refused (408). :func:`parse_body` parses it (off the event
loop above ``thread_above`` bytes, so one large body does not stall the other
clients) and :func:`check_tree` walks the JSON once, without recursion: nesting
depth, array lengths, message count and strings that cannot be encoded (a lone
surrogate such as ``"\\ud800"``). :func:`check_ranges` bounds the neutral options
the dialects define ranges for. Every refusal is a :class:`RequestError` carrying
its HTTP status, answered in the client dialect's envelope.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.types import Receive

from ...core.errors import RequestError
from ...core.requests import ChatRequest

__all__ = ["DEFAULT_GATEWAY_LIMITS", "ClientDisconnected", "GatewayLimits",
           "check_ranges", "check_tree", "parse_body", "read_body"]

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class GatewayLimits:
    """Bounds on one client request (defaults in ``docs/SECURITY.md``).

    ``max_body_bytes`` (413), ``body_timeout`` seconds to receive the whole body
    (408), ``max_json_depth`` nesting of arrays/objects, ``max_items`` elements of
    any one array, ``max_messages`` turns (``messages``/``input``), ``max_tokens``
    the largest output-token count forwarded, ``thread_above`` the body size from
    which JSON is parsed in a worker thread. Header sizes and the header read
    timeout belong to the server (:mod:`streamflow.servers.gateway.server`).
    """

    max_body_bytes: int = 32 * MIB
    body_timeout: float = 30.0
    max_json_depth: int = 64
    max_items: int = 10_000
    max_messages: int = 10_000
    max_tokens: int = 1_000_000
    thread_above: int = 256 * 1024


DEFAULT_GATEWAY_LIMITS = GatewayLimits()


async def read_body(receive: Receive, limits: GatewayLimits,
                    declared: int | None = None) -> bytes:
    """The request body, refused (``RequestError``) as soon as it is too large or too slow.

    ``declared`` (the ``content-length`` header) is refused before a byte is read
    when it is already over the limit. A client that leaves while sending raises
    :class:`ClientDisconnected`.
    """
    cap = limits.max_body_bytes
    if declared is not None and declared > cap:
        raise RequestError(f"request body of {declared} bytes is over the limit of {cap}", 413)
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(limits.body_timeout) as scope:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                raise RequestError(f"request body is over the limit of {cap} bytes", 413)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    if scope.cancelled_caught:
        raise RequestError(f"request body not received within {limits.body_timeout:g} s", 408)
    return b"".join(chunks)


class ClientDisconnected(Exception):
    """The client left before its request was read (nothing to answer)."""


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except RecursionError:
        raise RequestError("request body is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise RequestError(f"request body is not JSON: {exc}") from None


async def parse_body(raw: bytes, limits: GatewayLimits) -> Any:
    """``raw`` parsed and checked (:func:`check_tree`); large bodies in a worker thread."""
    def work() -> Any:
        value = _loads(raw)
        check_tree(value, limits)
        return value
    if len(raw) > limits.thread_above:
        return await anyio.to_thread.run_sync(work)
    return work()


def check_tree(value: Any, limits: GatewayLimits) -> None:
    """Refuse a JSON value too deep, with too long an array or an unencodable string."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_text(node)
            continue
        if not isinstance(node, (dict, list)):
            continue
        if depth > limits.max_json_depth:
            raise RequestError(f"request body is nested deeper than {limits.max_json_depth}")
        if isinstance(node, dict):
            for key, item in node.items():
                _check_text(key)
                stack.append((item, depth + 1))
        else:
            if len(node) > limits.max_items:
                raise RequestError(f"an array of {len(node)} elements is over the limit of "
                                  f"{limits.max_items}", 413)
            stack.extend((item, depth + 1) for item in node)
    if isinstance(value, dict):
        for name in ("messages", "input"):
            turns = value.get(name)
            if isinstance(turns, list) and len(turns) > limits.max_messages:
                raise RequestError(f"{len(turns)} {name} are over the limit of "
                                  f"{limits.max_messages}", 413)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError("request body holds a string that is not valid Unicode "
                          "(a lone surrogate)") from None


def _bounded(name: str, value: float | None, low: float, high: float) -> None:
    if value is not None and not low <= value <= high:
        raise RequestError(f"{name} must be between {low:g} and {high:g}, not {value!r}")


def check_ranges(chat: ChatRequest, limits: GatewayLimits) -> None:
    """The neutral options within the ranges the dialects define (a 400 otherwise)."""
    _bounded("max_tokens", chat.max_tokens, 1, limits.max_tokens)
    _bounded("temperature", chat.temperature, 0, 2)
    _bounded("top_p", chat.top_p, 0, 1)
    if chat.thinking is not None:
        _bounded("thinking budget", chat.thinking.budget, 0, limits.max_tokens)
    n = chat.options.get("n")
    if isinstance(n, bool) or (n is not None and not isinstance(n, int)):
        raise RequestError(f"n must be an integer, not {n!r}")
    _bounded("n", n, 1, 128)
    for name in ("frequency_penalty", "presence_penalty"):
        value = chat.options.get(name)
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, (int, float))):
            raise RequestError(f"{name} must be a number, not {value!r}")
        _bounded(name, value, -2, 2)
    top_k = chat.options.get("top_k")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int)):
        raise RequestError(f"top_k must be an integer, not {top_k!r}")
    _bounded("top_k", top_k, 0, 1_000_000)


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What the server bounds: seconds to receive a request head, seconds a kept-alive
    connection may idle, concurrent connections, and bytes of a request head."""

    header_timeout: float = 10.0
    keep_alive_timeout: float = 5.0
    max_connections: int = 1000
    max_header_bytes: int = 64 * 1024


DEFAULT_SERVER_LIMITS = ServerLimits()


class _HeadTimer:
    """Closes a connection whose request head is not complete within ``header_timeout``.

    Mixed into uvicorn's protocols: the timer is armed when the connection opens and
    when a response ends, and it closes the connection unless a head arrived since.
    Its state is a slot: an attribute more in uvicorn's protocol's ``__dict__`` would
    take it past the 30 keys CPython shares between instances, and every connection
    would carry a dict of its own (``bench/README.md`` has the figures).
    """

    __slots__ = ("_header_timer",)

    header_timeout: float = DEFAULT_SERVER_LIMITS.header_timeout
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        if not self.transport.is_closing():
            self._header_timer: asyncio.TimerHandle | None = self.loop.call_later(
                self.header_timeout, self._header_timed_out)

    def _disarm_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        """Close the connection unless a request's head arrived since the timer started."""
        self._header_timer = None
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            self.transport.close()
