"""sanitize(): model text can never drive the terminal (escapes, C1, bidi), whatever the split."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from streamflow.reactive.sinks.sanitize import StreamSanitizer, has_unsafe, sanitize

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
FORBIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")

# Text rich in the characters that matter, so hypothesis meets real sequences.
SPICY = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("\x1b[]P\\;:0123456789JmHc()B_^X\x07\x9b\x9c\x9d\x90\x18\n\t\r ")),
        st.sampled_from(list(BIDI)),
        st.characters(),
    ),
    max_size=80,
)


def test_escape_sequences_are_removed_whole() -> None:
    assert sanitize("a\x1b[2Jb") == "ab"  # clear screen: the parameters go too
    assert sanitize("\x1b[38;5;196mred\x1b[0m") == "red"
    assert sanitize("x\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\y") == "xclicky"  # OSC 8
    assert sanitize("\x1b]52;c;ZXZpbA==\x07after") == "after"  # clipboard write
    assert sanitize("\x1bP1$qm\x1b\\ok") == "ok"  # DCS
    assert sanitize("\x1b(Bok\x1bc!") == "ok!"  # charset select, full reset
    assert sanitize("a\x9b31mb\x9dtitle\x9cc") == "abc"  # 8-bit CSI and OSC


def test_controls_and_bidi_are_dropped_but_newline_and_tab_kept() -> None:
    assert sanitize("line1\r\nline2\tend\x07\x08\x00") == "line1\nline2\tend"
    assert sanitize("admin\u202e\u2066txt.exe\u2069") == "admintxt.exe"
    assert sanitize("\x85next\x7f") == "next"


def test_unterminated_string_sequence_ends_at_the_line() -> None:
    assert sanitize("keep\x1b]0;never closed\nnext line") == "keep\nnext line"


def test_plain_text_and_markup_pass_unchanged() -> None:
    text = "Hello [link=https://evil]x[/link] — ünïcödé 你好 🙂\n\tcode"
    assert sanitize(text) == text
    assert not has_unsafe(text)


@given(SPICY)
def test_output_never_holds_a_control(text: str) -> None:
    out = sanitize(text)
    assert FORBIDDEN.search(out) is None
    assert "\x1b" not in out


@given(SPICY)
def test_sanitize_is_idempotent(text: str) -> None:
    once = sanitize(text)
    assert sanitize(once) == once


@given(SPICY, st.lists(st.integers(min_value=0, max_value=80), max_size=8))
def test_any_split_gives_the_same_output(text: str, cuts: list[int]) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    stream = StreamSanitizer()
    assert "".join(stream.feed(p) for p in pieces) + stream.close() == sanitize(text)
