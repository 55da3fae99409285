"""RenderSink: what a user sees in a terminal or a pipe, and what hostile text cannot do."""

from __future__ import annotations

import io
import re

import pytest
import reactivex
from hypothesis import given
from hypothesis import strategies as st
from realdata import DATA
from rich.console import Console

from streamflow.app.runtime import run
from streamflow.core.errors import CancelledStreamError, ProviderError
from streamflow.core.events import InlineDataItem, UniEvent, Usage
from streamflow.reactive.sinks._render_markdown import BlockSplitter
from streamflow.reactive.sinks.render import RenderSink
from streamflow.reactive.sources.replay import ReplaySource
from streamflow.wire.dialects.base import Emitter

HOSTILE = ("Hello \x1b[2Jworld, \x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\ "
           "then \x1b]52;c;ZXZpbA==\x07copy and [link=https://evil.example]x[/link] "
           "\u202eevil\u202c done.\n\nSecond \x9b2J paragraph.")
CSI_SGR_OR_MOVE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def events(text: str = "", *, thinking: str = "", tool: tuple[str, list[str]] | None = None,
           usage: Usage | None = None, finish: str = "stop", step: int = 4,
           stop: bool = True) -> list[UniEvent]:
    """A stream built with the core Emitter: thinking, text (in ``step``-char pieces), a tool."""
    em = Emitter()
    em.note({"id": "msg_1", "model": "claude-test"})
    for i in range(0, len(thinking), step):
        em.thinking(thinking[i:i + step])
    for i in range(0, len(text), step):
        em.text(text[i:i + step])
    if tool is not None:
        name, parts = tool
        em.tool_call("", name, "call_1", new=True)
        for part in parts:
            em.tool_call(part)
    if stop:
        em.stop(usage or Usage(prompt_tokens=10, response_tokens=50), finish)  # type: ignore[arg-type]
    return em.drain()  # without stop, the last group stays open (a cut stream)


class Ticker:
    """A fake clock: every call advances by ``step`` seconds."""

    def __init__(self, step: float = 0.001) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def tty(width: int = 100, interactive: bool = True) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, force_interactive=interactive,
                      width=width, height=30, color_system="standard")
    return console, buf


def visible(raw: str) -> str:
    """Terminal output without rich's own SGR/cursor codes."""
    return CSI_SGR_OR_MOVE.sub("", raw)


def feed(sink: RenderSink, stream: list[UniEvent]) -> None:
    for event in stream:
        sink.on_next(event)
    sink.on_completed()


def assert_defanged(out: str) -> None:
    assert "\x1b]" not in out  # no OSC at all: no hyperlink (8), no clipboard (52), no title
    assert "\x1b[2J" not in out and "\x9b" not in out
    assert "\x1bP" not in out
    assert "ZXZpbA==" not in out  # the clipboard payload is gone with its sequence
    assert "\u202e" not in out


@pytest.mark.parametrize("markdown", [True, False])
def test_hostile_text_cannot_reach_a_terminal(markdown: bool) -> None:
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker(0.1), markdown=markdown)
    feed(sink, events(HOSTILE, thinking="think \x1b]52;c;ZXZpbA==\x07hard",
                      tool=("get\x1b[2Jweather", [r'{"q": "\u001b]8;;http://x\u001b\\a\u202e",',
                                                       ' "r": "\x9b2J\u202e"}'])))
    out = buf.getvalue()
    assert_defanged(out)
    text = visible(out)
    assert "click me" in text and "[link=https://evil.example]x[/link]" in text
    assert "getweather" in text


def test_hostile_text_in_plain_mode_is_text_only() -> None:
    buf, err = io.StringIO(), io.StringIO()
    sink = RenderSink(Console(file=buf), err_file=err)
    assert sink.plain  # a StringIO is no terminal: plain mode is chosen automatically
    feed(sink, events(HOSTILE, thinking="hidden thoughts"))
    out = buf.getvalue()
    assert "\x1b" not in out and "\x9b" not in out
    assert out == ("Hello world, click me then copy and [link=https://evil.example]x[/link] "
                   "evil done.\n\nSecond  paragraph.\n")
    assert "hidden thoughts" not in out  # text only: thinking stays out of the pipe
    assert "claude-test" in err.getvalue()  # the footer goes to stderr


def test_error_messages_are_sanitised_too() -> None:
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker())
    for event in events("partial answer", stop=False):
        sink.on_next(event)
    sink.on_error(ProviderError("bad \x1b]8;;http://evil\x1b\\thing\x1b[2J", code=500))
    assert_defanged(buf.getvalue())
    assert "✖ ProviderError: bad thing (retryable)" in visible(buf.getvalue())


def test_thinking_is_dimmed_and_apart_from_the_answer() -> None:
    console, buf = tty(interactive=False)
    feed(RenderSink(console, clock=Ticker()), events("The answer.", thinking="Let me think."))
    out = buf.getvalue()
    think_at, answer_at = out.index("Let me think."), out.index("The answer.")
    assert think_at < answer_at
    assert "\x1b[2;3m" in out[think_at - 12:think_at]  # dim italic
    assert "\x1b[2" not in out[answer_at - 12:answer_at]  # the answer is not dim
    assert "Thinking" in visible(out)


def test_finished_blocks_reach_scrollback_once() -> None:
    paragraphs = [f"Paragraph number {i} says something." for i in range(5)]
    answer = "\n\n".join(paragraphs) + "\n\n```python\nprint('hi')\n```\nTail text"
    console, buf = tty(interactive=False)
    feed(RenderSink(console, clock=Ticker()), events(answer, step=3))
    text = visible(buf.getvalue())
    for paragraph in paragraphs:
        assert text.count(paragraph) == 1
    assert text.count("print('hi')") == 1 and text.count("Tail text") == 1
    assert text.index("Paragraph number 4") < text.index("print") < text.index("Tail text")


def test_live_frames_are_throttled_by_the_clock() -> None:
    words = " ".join(f"w{i}" for i in range(200))
    console, fast = tty()
    feed(RenderSink(console, clock=Ticker(0.0001), fps=10), events(words, step=2))
    console, slow = tty()
    feed(RenderSink(console, clock=Ticker(1.0), fps=10), events(words, step=2))
    # ~500 deltas within ~0.1 s at 10 fps: one or two frames, plus the final render
    assert visible(fast.getvalue()).count("w0 ") <= 3
    # every delta a second apart: every delta is its own frame
    assert visible(slow.getvalue()).count("w0 ") > 100


def test_rendering_cost_is_linear_in_answer_length() -> None:
    def output_size(paragraphs: int) -> int:
        text = "\n\n".join(f"Sentence {i} is about here and there." for i in range(paragraphs))
        console, buf = tty()
        feed(RenderSink(console, clock=Ticker(1.0)), events(text, step=3))  # a frame per delta
        return len(buf.getvalue())

    small, large = output_size(40), output_size(160)
    assert large < 5 * small  # 4x the text: ~4x the output, not ~16x


def test_tool_call_line_grows_with_partial_arguments() -> None:
    console, buf = tty()
    parts = ['{"loca', 'tion": "Pa', 'ris", "unit', 's": "metric"}']
    feed(RenderSink(console, clock=Ticker(1.0)), events(tool=("get_weather", parts)))
    text = visible(buf.getvalue())
    assert '⚙ get_weather {"location": "Pa"}' in text  # a live frame, mid-arguments
    assert '⚙ get_weather {"location": "Paris", "units": "metric"}' in text  # the final line


def test_footer_shows_model_tokens_ttft_rate_and_cost() -> None:
    console, buf = tty()
    usage = Usage(prompt_tokens=1200, response_tokens=50, cost=0.0123)
    feed(RenderSink(console, clock=Ticker(0.2)), events("Hi there.", usage=usage))
    footer = visible(buf.getvalue()).strip().splitlines()[-1]
    assert footer.startswith("claude-test · 1,200 in · 50 out · TTFT 0.")
    assert "tok/s" in footer and "$0.0123" in footer and footer.endswith("stop")


def test_prices_give_a_cost_when_the_provider_reports_none() -> None:
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker(), prices=(3.0, 15.0))
    feed(sink, events("Hi.", usage=Usage(prompt_tokens=1_000_000, response_tokens=100_000)))
    assert "$4.5000" in visible(buf.getvalue())


def test_interrupt_keeps_the_partial_answer_marked() -> None:
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker())
    for event in events("First paragraph.\n\nSecond, cut sho", stop=False):
        sink.on_next(event)
    sink.interrupted()
    text = visible(buf.getvalue())
    assert "First paragraph." in text and "Second, cut sho" in text
    assert "⏹ interrupted" in text
    assert text.index("Second, cut sho") < text.index("interrupted")


@pytest.mark.parametrize("cut", ["Right now, so:\n\n* **Yes, bring", "Run `pip inst",
                                 "**Both `open"])
def test_an_interrupt_inside_open_markdown_shows_no_raw_marks(cut: str) -> None:
    """Ctrl-C inside ``**bold`` or a code span: the partial prints as Markdown (the open
    marks closed for the screen), never with the raw ``**`` / backtick left behind."""
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker())
    for event in events(cut, stop=False):
        sink.on_next(event)
    sink.interrupted()
    text = visible(buf.getvalue())
    assert "**" not in text and "`" not in text
    assert cut.split()[-1].strip("*`") in text and "⏹ interrupted" in text


def test_a_finished_answer_keeps_the_models_own_marks() -> None:
    """Only a cut block is closed: a finished answer is the model's, marks and all."""
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker())
    for event in events("a lone ** in a finished answer"):
        sink.on_next(event)
    assert "a lone ** in a finished answer" in visible(buf.getvalue())


def test_cancel_error_in_plain_mode_goes_to_stderr() -> None:
    buf, err = io.StringIO(), io.StringIO()
    sink = RenderSink(Console(file=buf), err_file=err)
    for event in events("partial", stop=False):
        sink.on_next(event)
    sink.on_error(CancelledStreamError("cancelled"))
    assert buf.getvalue() == "partial\n"
    assert "interrupted" in err.getvalue()


def test_error_keeps_partial_tool_call_visible() -> None:
    console, buf = tty()
    sink = RenderSink(console, clock=Ticker())
    for event in events(tool=("search", ['{"query": "ca']), stop=False):
        sink.on_next(event)
    sink.on_error(ProviderError("overloaded", type="overloaded_error"))
    text = visible(buf.getvalue())
    assert '⚙ search {"query": "ca"}  (incomplete)' in text
    assert "✖ ProviderError: overloaded (retryable)" in text


def test_subscribes_to_a_reactivex_observable_and_can_be_reused() -> None:
    buf, err = io.StringIO(), io.StringIO()
    sink = RenderSink(Console(file=buf), err_file=err)
    reactivex.from_iterable(events("one")).subscribe(sink)
    reactivex.from_iterable(events("two")).subscribe(sink)
    assert buf.getvalue() == "one\n\ntwo\n"  # plain mode: a blank line between two answers


def test_plain_can_be_forced_on_a_terminal() -> None:
    console, buf = tty()
    feed(RenderSink(console, plain=True, err_file=io.StringIO()), events("**bold** text"))
    assert buf.getvalue() == "**bold** text\n"


def test_signature_only_thinking_prints_no_heading() -> None:
    em = Emitter()
    em.thinking("", {"signature": "sig"})
    em.text("Answer.")
    em.stop(Usage(), "stop")
    console, buf = tty(interactive=False)
    feed(RenderSink(console, clock=Ticker()), em.drain())
    text = visible(buf.getvalue())
    assert "Thinking" not in text and "Answer." in text


def test_media_items_get_a_placeholder_line() -> None:
    em = Emitter()
    em.delta(InlineDataItem("inline_data.delta", b"\x89PNG" * 10, "image/png\x1b[2J"))
    em.stop(Usage(), "stop")
    console, buf = tty(interactive=False)
    feed(RenderSink(console, clock=Ticker()), em.drain())
    assert "[image/png, 40 bytes]" in visible(buf.getvalue())
    assert "\x1b[2J" not in buf.getvalue()


MARKDOWN = st.text(alphabet=st.sampled_from(list("ab `~\n\t#-")), max_size=120)


@given(MARKDOWN, st.lists(st.integers(min_value=0, max_value=120), max_size=10))
def test_block_splitter_is_chunking_independent(text: str, cuts: list[int]) -> None:
    whole = BlockSplitter()
    expected = [*whole.feed(text), whole.flush()]
    points = sorted({min(c, len(text)) for c in cuts})
    split = BlockSplitter()
    got: list[str] = []
    for a, b in zip([0, *points], [*points, len(text)], strict=True):
        got += split.feed(text[a:b])
    assert [*got, split.flush()] == expected
    # nothing is lost: every non-blank line comes out once, in order
    lines = [line for line in text.split("\n") if line.strip()]
    out = [line for block in expected for line in block.split("\n") if line.strip()]
    assert out == lines


def test_code_fence_blocks_wait_for_the_closing_fence() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("Intro\n```py\nx = 1\n\ny = 2\n") == ["Intro"]
    assert splitter.in_fence  # the blank line inside the fence does not end it
    assert splitter.feed("```\nafter") == ["```py\nx = 1\n\ny = 2\n```"]
    assert splitter.tail() == "after"


@pytest.mark.anyio
async def test_renders_a_replayed_stream_through_run() -> None:
    source = ReplaySource(DATA / "sinks" / "tool_turn.sse", speed=None)
    buf, err = io.StringIO(), io.StringIO()
    message = await run(source, RenderSink(Console(file=buf), err_file=err), dialect="anthropic")
    assert buf.getvalue() == message.text + "\n" == "Let me check.\n"
    console, screen = tty()
    await run(source, RenderSink(console), dialect="anthropic")
    text = visible(screen.getvalue())
    assert "Let me check." in text and '⚙ get_weather {"city": "Paris"}' in text
    assert "claude-test · 12 in · 30 out" in text and text.rstrip().endswith("tool_call")
