"""Make model text safe to show in a terminal.

Model output is untrusted: it can carry escape sequences that clear the screen
(``ESC [ 2 J``), plant hyperlinks whose target differs from their text
(OSC 8), write the clipboard (OSC 52), set the window title, or flip the reading
order of the line (bidi overrides, the "Trojan Source" trick). :func:`sanitize`
removes, before any rich object is built:

* every C0 control except ``\\n`` and ``\\t`` (``\\r`` too: it can overwrite a line),
  DEL, and every C1 control (``U+0080``-``U+009F``);
* whole escape sequences, not just their ESC: CSI (``ESC [`` / ``U+009B``), the
  string sequences OSC/DCS/SOS/PM/APC up to their BEL or ST terminator, and the
  short ``ESC`` + intermediates + final forms (``ESC c``, ``ESC ( B``...);
* the Unicode bidi controls (``U+061C``, ``U+200E``/``U+200F``, ``U+202A``-``U+202E``,
  ``U+2066``-``U+2069``).

A string sequence that is never terminated ends at the next newline (the newline
is kept), so a stray ``ESC ]`` swallows at most the rest of its line.

:class:`StreamSanitizer` does the same incrementally, for text arriving in
fragments: a sequence split across fragments is still removed whole, and any
split of a text gives the same output as :func:`sanitize` on the whole. Text
without control characters passes through a single regex search unchanged.

:func:`escape_controls` is for log lines and span names instead: nothing is
removed, every control character becomes a visible escape (``\\n``, ``\\x1b``,
``\\u202e``), so a provider string stays on one inert line and can still be read.
"""

from __future__ import annotations

import re

__all__ = ["StreamSanitizer", "escape_controls", "has_unsafe", "sanitize"]

ESC = "\x1b"
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Inside a string sequence: what can end it (BEL, ST, ESC, newline, CAN, SUB).
_STRING_END = re.compile("[\x07\x9c\x1b\n\x18\x1a]")
_STRING_INTRODUCERS = frozenset("]PX^_")
_C1_STRING = frozenset("\x90\x98\x9d\x9e\x9f")

_GROUND, _ESC, _INTER, _CSI, _STRING, _STRING_ESC = range(6)


def has_unsafe(text: str) -> bool:
    """True when ``text`` holds anything :func:`sanitize` would remove."""
    return _UNSAFE.search(text) is not None


class StreamSanitizer:
    """Incremental :func:`sanitize`: ``feed`` fragments, then ``close``.

    State is a few integers; work is linear in the text fed, and a fragment with
    no control character costs one regex search.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state = _GROUND

    def feed(self, text: str) -> str:
        """The safe part of ``text`` (a sequence still open is remembered, not shown)."""
        if self._state == _GROUND and _UNSAFE.search(text) is None:
            return text
        out: list[str] = []
        pos, end = 0, len(text)
        state = self._state
        while pos < end:
            if state == _GROUND:
                match = _UNSAFE.search(text, pos)
                if match is None:
                    out.append(text[pos:])
                    break
                start = match.start()
                if start > pos:
                    out.append(text[pos:start])
                char = text[start]
                pos = start + 1
                if char == ESC:
                    state = _ESC
                elif char == "\x9b":
                    state = _CSI
                elif char in _C1_STRING:
                    state = _STRING
                # any other unsafe character is simply dropped
                continue
            if state in (_STRING, _STRING_ESC):
                state, pos = self._string(text, pos, state, out)
                continue
            char = text[pos]
            code = ord(char)
            if state == _ESC:
                if char == "[":
                    state, pos = _CSI, pos + 1
                elif char in _STRING_INTRODUCERS:
                    state, pos = _STRING, pos + 1
                elif 0x20 <= code <= 0x2F:
                    state, pos = _INTER, pos + 1
                elif 0x30 <= code <= 0x7E:
                    state, pos = _GROUND, pos + 1
                else:
                    state = _GROUND  # drop the lone ESC, read ``char`` again
            elif state == _INTER:
                if 0x20 <= code <= 0x2F:
                    pos += 1
                elif 0x30 <= code <= 0x7E:
                    state, pos = _GROUND, pos + 1
                else:
                    state = _GROUND
            else:  # _CSI: parameters and intermediates, then one final byte
                if 0x20 <= code <= 0x3F:
                    pos += 1
                elif 0x40 <= code <= 0x7E:
                    state, pos = _GROUND, pos + 1
                else:
                    state = _GROUND
        self._state = state
        return "".join(out)

    @staticmethod
    def _string(text: str, pos: int, state: int, out: list[str]) -> tuple[int, int]:
        """Skip string-sequence content; returns the new state and position."""
        if state == _STRING_ESC:
            if text[pos] == "\\":
                return _GROUND, pos + 1  # ST
            return _ESC, pos  # ESC that starts another sequence: the string is aborted
        match = _STRING_END.search(text, pos)
        if match is None:
            return _STRING, len(text)
        char = match.group()
        if char == ESC:
            return _STRING_ESC, match.end()
        if char == "\n":
            return _GROUND, match.start()  # unterminated: ends at the line, newline kept
        return _GROUND, match.end()  # BEL, ST, CAN, SUB

    def close(self) -> str:
        """End of text: an open sequence is dropped; resets the state."""
        self._state = _GROUND
        return ""


def sanitize(text: str) -> str:
    """``text`` without control characters, escape sequences or bidi controls."""
    if _UNSAFE.search(text) is None:
        return text
    return StreamSanitizer().feed(text)


# C0 (newline and tab too), DEL, C1, zero-width and bidi controls, line/paragraph separators
_LOG_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                         "\u2060-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def escape_controls(text: str) -> str:
    r"""``text`` as one inert line: each control character as a visible escape.

    For the strings a log message or span name is built from: a newline becomes
    the two characters ``\n``, ESC ``\x1b`` (so ``ESC [2J`` prints as ``\x1b[2J``),
    U+202E ``\u202e``; everything else is unchanged.
    """
    if _LOG_UNSAFE.search(text) is None:
        return text
    return _LOG_UNSAFE.sub(_escape, text)
