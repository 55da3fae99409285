"""One meaning per word (the glossary of ``docs/ARCHITECTURE.md``), held over the source.

A provider API's protocol is a *dialect*, never a "format" (a format is a file layout:
the recording format); a request body the client broke is a ``RequestError``, never a
``ProtocolError`` flagged "client side"; and no process words (issue or seed numbers,
session notes) or benchmark figures sit in the package's docstrings, which describe what
the code does, not how it came to be; what an encoder writes is its *target* (a dialect
or a UI target), never ``to`` or ``protocol``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import streamflow

PACKAGE = Path(streamflow.__file__).parent

BANNED = {
    "a dialect called a format": re.compile(
        r"\b(?:provider|client|upstream|request|native|target|wire)(?:'s)?(?: own)?"
        r"(?: event)? formats?\b|\b(?:every|each|its own|per) (?:request )?format\b"
        r"|\bthe formats define\b", re.IGNORECASE),
    "the client's fault flagged on a ProtocolError": re.compile(r"\bclient_side\b"),
    "a process word": re.compile(r"\b(?:seed|issue) \d{2,3}\b|\bround \d of issue\b",
                                 re.IGNORECASE),
    "a benchmark figure": re.compile(r"\b\d+(?:\.\d+)?(?:[–-]\d+)? ?µs\b"),
    "what an encoder writes called anything but a target": re.compile(
        r"\b(?:to|protocol): str\b|\bdef encode\((?:[^)]*, )?dialect: str"),
}


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("rule", sorted(BANNED))
def test_no_banned_word_in_the_package(rule: str) -> None:
    pattern = BANNED[rule]
    found = [f"{path.relative_to(PACKAGE)}:{n}: {line.strip()[:80]}"
             for path in sources()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []


@pytest.mark.parametrize(("text", "rule"), [
    ("a conversation in provider format", "a dialect called a format"),
    ("the upstream's format cannot carry it", "a dialect called a format"),
    ("one client route per format", "a dialect called a format"),
    ("error_response(dialect, exc, client_side=True)",
     "the client's fault flagged on a ProtocolError"),
    ("the UniEvent model of seed 001", "a process word"),
    ("CPU per event fell from 196–206 to 138–178 µs", "a benchmark figure"),
    ("about 0.9 µs per event", "a benchmark figure"),
    ("async def create(self, request, chat_id, source, *, to: str = 'uni')",
     "what an encoder writes called anything but a target"),
    ("def encode(events: Iterable[UniEvent], dialect: str) -> Iterator[bytes]:",
     "what an encoder writes called anything but a target"),
])
def test_each_rule_catches_its_word(text: str, rule: str) -> None:
    assert BANNED[rule].search(text)


@pytest.mark.parametrize("text", ["the recording format", "response_format", "audio format",
                                  "output_config.format", "FORMAT_VERSION"])
def test_the_rules_leave_the_word_format_where_it_is_a_format(text: str) -> None:
    assert not any(rule.search(text) for rule in BANNED.values())
