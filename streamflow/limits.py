"""Limits against memory exhaustion and hung streams, with documented defaults.

Passing a limit raises :class:`~streamflow.errors.LimitExceededError` naming it
(or :class:`~streamflow.errors.StreamTimeoutError` for the two timeouts), with
everything received before it kept on the error's ``partial`` message.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import LimitExceededError

__all__ = ["Budget", "DEFAULT_LIMITS", "Limits"]

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
    """

    max_event_bytes: int = 32 * MiB
    max_tool_arguments_bytes: int = 16 * MiB
    max_message_bytes: int = 256 * MiB
    max_groups: int = 10_000
    idle_timeout: float | None = 600.0
    deadline: float | None = None


DEFAULT_LIMITS = Limits()


class Budget:
    """The size and count limits of one message, counted in one place.

    The :class:`~streamflow.dialects.base.Emitter` (and the ``uni`` dialect through
    it) asks before anything changes, so a refused fragment leaves the partial
    message as it was: :meth:`open_group` before a new group (or a kept provider
    entry), :meth:`grow` for each fragment (it raises before counting);
    :meth:`reserve` counts bytes a dialect holds back before they become fragments
    (out-of-order tool calls), and :meth:`release` returns them when they are emitted.
    """

    __slots__ = ("limits", "size", "groups", "group_size", "held")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.size = 0          # bytes of every fragment so far
        self.groups = 0        # groups opened plus provider entries kept
        self.group_size = 0    # bytes of the open group
        self.held = 0          # bytes buffered by a dialect, not yet fragments

    def open_group(self) -> None:
        """Count one more group (``max_groups``)."""
        if self.groups >= self.limits.max_groups:
            raise LimitExceededError("max_groups", self.limits.max_groups)
        self.groups += 1
        self.group_size = 0

    def check_groups(self, extra: int) -> None:
        """Raise if ``extra`` more groups (held back by a dialect) would pass ``max_groups``."""
        if self.groups + extra > self.limits.max_groups:
            raise LimitExceededError("max_groups", self.limits.max_groups)

    def grow(self, size: int, tool: bool) -> None:
        """Count a fragment of ``size`` bytes of the open group (``tool``: a tool call's
        arguments); raises before counting when it would pass a limit."""
        limits = self.limits
        total = self.size + size
        if total + self.held > limits.max_message_bytes:
            raise LimitExceededError("max_message_bytes", limits.max_message_bytes)
        group = self.group_size + size
        if tool and group > limits.max_tool_arguments_bytes:
            raise LimitExceededError("max_tool_arguments_bytes", limits.max_tool_arguments_bytes)
        self.size = total
        self.group_size = group

    def reserve(self, size: int, held_in_group: int = 0) -> None:
        """Count ``size`` bytes a dialect buffers; ``held_in_group`` is that buffer's total
        for one tool call (checked against ``max_tool_arguments_bytes``)."""
        limits = self.limits
        if self.size + self.held + size > limits.max_message_bytes:
            raise LimitExceededError("max_message_bytes", limits.max_message_bytes)
        if held_in_group > limits.max_tool_arguments_bytes:
            raise LimitExceededError("max_tool_arguments_bytes", limits.max_tool_arguments_bytes)
        self.held += size

    def release(self, size: int) -> None:
        """Buffered bytes about to be emitted as fragments (counted by :meth:`grow` then)."""
        self.held = max(0, self.held - size)
