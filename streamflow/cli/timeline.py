"""``streamflow inspect --timeline FILE``: a recorded stream drawn on its time axis.

One row per fact, all on the same axis (seconds since the request was sent)::

    request      ●┄┄┄┄┄◆▶                      first byte 0.45s · first token 0.52s
    thinking         █████████                 38 fragments · 412 chars · 0.61s
    text                      ███████▒▒█████   61 fragments · 540 chars · 1.02s
    ⚙ get_weather                          ██  9 fragments · 48 chars · 0.12s
    stalls                      ░░             1 gap > 0.5s · longest 0.71s at 1.20s
    chunks       ▂▁▃▂▂▁▂▃▂▁▂▂▂▁▂▂▂▁            112 arrivals · up to 4 a column
    tokens/s     ▁▃▆█▇▆▅▅▆▄▁▁▂▅▆▆▅▃            peak 96 · mean 71

A bar runs from a group's first fragment to its last; ``▒`` marks where no
fragment arrived for longer than the stall threshold. ``--timeline-svg out.svg``
writes the same picture with rich's SVG export. The file must be a Recorder file
(raw bodies have no arrival times).
"""

from __future__ import annotations

import argparse
import io
import itertools
import math
import sys
from typing import TYPE_CHECKING

from rich.console import Console, Group, RenderableType
from rich.text import Text

from ..reactive.sinks.sanitize import sanitize
from .timeline_model import StreamTimeline, build_timeline

if TYPE_CHECKING:
    from .summary import InspectResult

__all__ = ["draw_timeline", "show_timeline"]

LABEL = 16  # label column
NOTE = 40   # room kept for the right-hand notes
COLOURS = {"thinking": "magenta", "text": "green", "tool_call": "cyan"}
SPARKS = " ▁▂▃▄▅▆▇█"
_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600)


def _seconds(value: float) -> str:
    return f"{value:.2f}s" if value < 10 else f"{value:.1f}s"


class _Axis:
    """Maps seconds to the columns of the chart."""

    def __init__(self, duration: float, width: int) -> None:
        self.duration = max(duration, 1e-6)
        self.width = max(10, width)

    def column(self, t: float) -> int:
        return min(self.width - 1, max(0, math.floor(t / self.duration * self.width)))

    def ruler(self) -> tuple[Text, Text]:
        step = next((s for s in _STEPS if self.duration / s <= self.width / 9), _STEPS[-1])
        line = ["─"] * self.width
        labels = [" "] * (self.width + 8)
        tick = 0.0
        while tick <= self.duration + 1e-9:
            column = self.column(tick)
            line[column] = "┬" if column else "├"
            text = f"{tick:g}s"
            if all(c == " " for c in labels[column:column + len(text) + 1]):
                labels[column:column + len(text)] = text
            tick += step
        line[-1] = "┤"
        end = f"{self.duration:.2f}s"
        if all(c == " " for c in labels[self.width - len(end) - 1:self.width]):
            labels[self.width - len(end):self.width] = end
        return Text("".join(line), style="dim"), Text("".join(labels).rstrip(), style="dim")


def _row(width: int, label: str, bar: Text, note: str = "", style: str = "") -> Text:
    row = Text(sanitize(label)[:LABEL - 1].ljust(LABEL), style=style or "bold", no_wrap=True,
               overflow="ellipsis")
    row.append_text(bar)
    row.pad_right(width - bar.cell_len)
    if note:
        row.append("  " + note, style="dim")
    return row


def _bar(axis: _Axis, start: float, end: float, arrivals: list[float], threshold: float,
         style: str) -> Text:
    cells = [" "] * axis.width
    first, last = axis.column(start), axis.column(end)
    for column in range(first, last + 1):
        cells[column] = "█"
    for a, b in itertools.pairwise(arrivals):
        if b - a > threshold:  # open but silent: dashed
            for column in range(axis.column(a) + 1, axis.column(b)):
                cells[column] = "▒"
    return Text("".join(cells).rstrip(), style=style)


def _request(axis: _Axis, line: StreamTimeline) -> Text:
    cells = [" "] * axis.width
    end = line.first_token if line.first_token is not None else line.first_byte
    if end is not None:
        for column in range(0, axis.column(end)):
            cells[column] = "┄"
    cells[0] = "●"
    if line.first_byte is not None:
        cells[axis.column(line.first_byte)] = "◆"
    if line.first_token is not None:
        cells[axis.column(line.first_token)] = "▶"
    return Text("".join(cells).rstrip(), style="yellow")


def _sparkline(values: list[float]) -> tuple[Text, float]:
    peak = max(values, default=0.0)
    if peak <= 0:
        return Text(""), 0.0
    marks = [SPARKS[min(8, math.ceil(v / peak * 8))] if v > 0 else " " for v in values]
    return Text("".join(marks).rstrip(), style="yellow"), peak


def draw_timeline(line: StreamTimeline, width: int = 100, title: str = "") -> RenderableType:
    """The picture (a rich renderable) of ``line`` for a console ``width`` wide."""
    axis = _Axis(line.duration, max(24, width - LABEL - NOTE))
    head = Text("◷ ", style="bold")
    head.append(sanitize(title or "stream timeline"), style="bold")
    facts = [f for f in (line.dialect, line.model, line.response_id) if f]
    rows: list[RenderableType] = [head]
    if facts:
        rows.append(Text("  " + sanitize(" · ".join(facts)), style="dim"))
    top, labels = axis.ruler()
    rows += [_row(axis.width, "", top), _row(axis.width, "", labels)]
    waits = []
    if line.first_byte is not None:
        waits.append(f"first byte {_seconds(line.first_byte)}")
    if line.first_token is not None:
        waits.append(f"first token {_seconds(line.first_token)}")
    rows.append(_row(axis.width, "request", _request(axis, line), " · ".join(waits) or "no answer"))
    for group in line.groups:
        style = COLOURS.get(group.kind, "blue")
        label = f"⚙ {group.label}" if group.kind == "tool_call" else group.label
        note = f"{group.fragments} fragment{'s' if group.fragments != 1 else ''} · " \
               f"{group.chars:,} chars · {_seconds(group.end - group.start)}"
        rows.append(_row(axis.width, label, _bar(axis, group.start, group.end, group.arrivals,
                                     line.threshold, style), note, style="bold " + style))
    if line.stalls:
        cells = [" "] * axis.width
        for stall in line.stalls:
            for column in range(axis.column(stall.start), axis.column(stall.end) + 1):
                cells[column] = "░"
        longest = max(line.stalls, key=lambda s: s.seconds)
        count = len(line.stalls)
        note = (f"{count} gap{'s' if count != 1 else ''} > {line.threshold:g}s · "
                f"longest {_seconds(longest.seconds)} at {_seconds(longest.start)}")
        rows.append(_row(axis.width, "stalls", Text("".join(cells).rstrip(), style="red"), note,
                         style="bold red"))
    arrivals = [0.0] * axis.width
    for t in line.chunk_times:
        arrivals[axis.column(t)] += 1
    chunks, busiest = _sparkline(arrivals)
    if busiest:
        chunks.stylize("blue")
        rows.append(_row(axis.width, "chunks", chunks,
                         f"{line.chunks} arrivals · up to {busiest:.0f} a column",
                         style="bold blue"))
    spark, peak = _sparkline(line.rate_curve(axis.width))
    if peak > 0:
        approx = "" if line.tokens_reported else "≈"
        mean = line.mean_rate
        note = f"peak {approx}{peak:.0f}" + (f" · mean {approx}{mean:.0f}" if mean else "")
        rows.append(_row(axis.width, "tokens/s", spark, note, style="bold yellow"))
    rows.append(Text(""))
    rows.append(_summary(line))
    return Group(*rows)


def _summary(line: StreamTimeline) -> Text:
    tokens = f"{line.output_tokens:,.0f} output tokens" if line.tokens_reported else \
        f"≈{line.output_tokens:,.0f} output tokens (estimated from {4:g} chars/token)"
    parts = [f"{_seconds(line.duration)} in all", f"{line.chunks} chunks", tokens,
             f"ended: {line.ended}"]
    if line.finish_reason:
        parts.insert(-1, f"finish: {sanitize(line.finish_reason)}")
    out = Text(" · ".join(parts), style="dim")
    if line.error:
        out.append("\n" + sanitize(line.error), style="red")
    return out


def show_timeline(args: argparse.Namespace, result: InspectResult) -> int:
    """Draw the timeline of the file ``inspect`` read (terminal and/or SVG); the exit code."""
    if result.recording is None:
        print(f"streamflow inspect: {args.file}: --timeline needs a Recorder file "
              "(.sfrec.jsonl: chunks with their arrival times); a raw body has none. "
              "Record one with `streamflow demo --record DIR` or "
              "streamflow.reactive.sinks.Recorder.", file=sys.stderr)
        return 2
    line = build_timeline(result.recording, threshold=args.stall,
                          dialect=result.dialect)
    title = f"stream timeline · {args.file}"
    if args.timeline or not args.timeline_svg:
        console = Console(highlight=False)
        console.print(draw_timeline(line, console.width, title))
    if args.timeline_svg:
        export = Console(record=True, width=110, force_terminal=True, color_system="truecolor",
                         file=io.StringIO(), highlight=False)
        export.print(draw_timeline(line, 110, title))
        export.save_svg(args.timeline_svg, title="streamflow inspect --timeline")
        print(f"wrote {args.timeline_svg}", file=sys.stderr)
    return 0 if result.error is None else 1
