"""Tool results as the render sink shows them: ``✓ name → result`` or ``✖ name → error``.

:meth:`RenderSink.on_tool_result <streamflow.reactive.sinks.render.RenderSink.on_tool_result>`
draws one line per result (the :class:`~streamflow.Agent` calls it after each turn's
tools ran, in call order; call it yourself after a ``ToolDispatchSink``). The result
text is cut to ``RESULT_PREVIEW`` characters (the model gets all of it) and
sanitised like all model-influenced text; in plain mode the line goes to
``err_file``, so stdout keeps the answer only.
"""

from __future__ import annotations

from typing import Protocol

from ...core._tools import ToolResult

RESULT_PREVIEW = 110


class _Notes(Protocol):
    def note(self, text: str, style: str = "dim") -> None: ...


def result_line(result: ToolResult, preview: int = RESULT_PREVIEW) -> tuple[str, str]:
    """The line for ``result`` and its style (green for a result, red for an error)."""
    mark, style = ("✖", "red") if result.is_error else ("✓", "green")
    text = result.text
    if len(text) > preview:
        text = text[:preview - 1] + "…"
    return f"{mark} {result.name} → {text}", style


def show_result(sink: _Notes, result: ToolResult) -> None:
    """Draw ``result`` on ``sink`` (anything with ``note(text, style)``)."""
    line, style = result_line(result)
    sink.note(line, style=style)
