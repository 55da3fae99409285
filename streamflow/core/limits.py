"""Limits against memory exhaustion and hung streams, with documented defaults.

Passing a limit raises :class:`~streamflow.core.errors.LimitExceededError` naming it
(or :class:`~streamflow.core.errors.StreamTimeoutError` for the two timeouts), with
everything received before it kept on the error's ``partial`` message.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "Limits"]

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Size, count and time limits of one stream (``None`` disables a timeout).

    * ``max_event_bytes`` -- one framed event (an SSE event's lines, an NDJSON line,
      an event-stream message): 32 MiB, room for a base64 image in one event.
    * ``max_tool_arguments_bytes`` -- one tool call's argument text: 16 MiB.
    * ``max_message_bytes`` -- all text, thinking, arguments and data of a message: 256 MiB.
    * ``max_groups`` -- content groups (blocks, tool calls...) in a message, counting
      the entries kept whole in the provider slot (server-tool blocks, unknown
      events): 10,000.
    * ``idle_timeout`` -- seconds without a byte between events: 600 (providers
      send no keep-alive while a model thinks).
    * ``deadline`` -- seconds for the whole stream: none by default.
    * ``first_chunk_timeout`` -- seconds from the start of the read (the request sent,
      its headers awaited) to the first chunk of the body: none by default (the idle
      timeout bounds each wait). A failover chain sets it to give up on an upstream
      that accepted the request and sends nothing (``StreamTimeoutError("first_chunk")``).
    """

    max_event_bytes: int = 32 * MiB
    max_tool_arguments_bytes: int = 16 * MiB
    max_message_bytes: int = 256 * MiB
    max_groups: int = 10_000
    idle_timeout: float | None = 600.0
    deadline: float | None = None
    first_chunk_timeout: float | None = None


DEFAULT_LIMITS = Limits()
