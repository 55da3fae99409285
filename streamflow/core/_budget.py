"""The :class:`Budget`: one message's size and count limits, counted in one place.

Compiled in the compiled build (the emitter asks it on every fragment); the limits
themselves are :class:`~streamflow.core.limits.Limits`.
"""

from __future__ import annotations

from .errors import LimitExceededError
from .limits import DEFAULT_LIMITS, Limits


class Budget:
    """The size and count limits of one message, counted in one place.

    The :class:`~streamflow.wire.dialects.base.Emitter` (and the ``uni`` dialect through
    it) asks before anything changes, so a refused fragment leaves the partial
    message as it was: :meth:`open_group` before a new group (or a kept provider
    entry), :meth:`grow` for each fragment (it raises before counting);
    :meth:`reserve` counts bytes a dialect holds back before they become fragments
    (out-of-order tool calls), and :meth:`release` returns them when they are emitted.
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        # the three numbers read on the per-token path, as plain ints (compiled: native)
        self.max_message_bytes = limits.max_message_bytes
        self.max_tool_arguments_bytes = limits.max_tool_arguments_bytes
        self.max_groups = limits.max_groups
        self.size = 0          # bytes of every fragment so far
        self.groups = 0        # groups opened plus provider entries kept
        self.group_size = 0    # bytes of the open group
        self.held = 0          # bytes buffered by a dialect, not yet fragments

    def open_group(self) -> None:
        """Count one more group (``max_groups``)."""
        if self.groups >= self.max_groups:
            raise LimitExceededError("max_groups", self.max_groups)
        self.groups += 1
        self.group_size = 0

    def check_groups(self, extra: int) -> None:
        """Raise if ``extra`` more groups (held back by a dialect) would pass ``max_groups``."""
        if self.groups + extra > self.max_groups:
            raise LimitExceededError("max_groups", self.max_groups)

    def grow(self, size: int, tool: bool) -> None:
        """Count a fragment of ``size`` bytes of the open group (``tool``: a tool call's
        arguments); raises before counting when it would pass a limit."""
        total = self.size + size
        if total + self.held > self.max_message_bytes:
            raise LimitExceededError("max_message_bytes", self.max_message_bytes)
        group = self.group_size + size
        if tool and group > self.max_tool_arguments_bytes:
            raise LimitExceededError("max_tool_arguments_bytes", self.max_tool_arguments_bytes)
        self.size = total
        self.group_size = group

    def reserve(self, size: int, held_in_group: int = 0) -> None:
        """Count ``size`` bytes a dialect buffers; ``held_in_group`` is that buffer's total
        for one tool call (checked against ``max_tool_arguments_bytes``)."""
        if self.size + self.held + size > self.max_message_bytes:
            raise LimitExceededError("max_message_bytes", self.max_message_bytes)
        if held_in_group > self.max_tool_arguments_bytes:
            raise LimitExceededError("max_tool_arguments_bytes", self.max_tool_arguments_bytes)
        self.held += size

    def release(self, size: int) -> None:
        """Buffered bytes about to be emitted as fragments (counted by :meth:`grow` then)."""
        self.held = max(0, self.held - size)
