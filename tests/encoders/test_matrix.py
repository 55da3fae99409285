"""Every recording x every target: decode, encode, decode again.

* The same dialect gives an equal :class:`Message`: every item (text, arguments,
  ``fidelity`` byte for byte, ``provider`` slots), usage (raw counters included),
  finish reason, id and model.
* Every other target gives the same text, thinking, tool calls (names, ids,
  arguments), usage and finish reason, except what docs/ENCODERS.md lists as not
  carried (asserted here as such, not skipped).
* A stream that failed fails again in the target, with the same message (the same
  typed error in ``uni``; the target's provider error elsewhere), after the same
  partial text.
"""

from __future__ import annotations

from typing import Any

import pytest
from corpus import RECORDINGS, TARGETS, convert, opaque, read_back, source, summary

from streamflow.core.errors import ProviderError
from streamflow.core.events import item_to_dict, usage_to_dict
from streamflow.wire.dialects.gemini.encode import is_base64

SAME = {"anthropic": "anthropic", "openai-chat": "openai-chat",
        "openai-responses": "openai-responses", "gemini": "gemini", "ollama": "ollama",
        "uni": "uni", "uni-jsonl": "uni-jsonl"}


def carried(target: str, want: dict[str, Any], source_dialect: str | None) -> dict[str, Any]:
    """``want`` with what ``target`` cannot carry taken out (see docs/ENCODERS.md)."""
    out = dict(want)
    if target == "ollama" and out["usage"] is not None:
        prompt, response, _, _ = out["usage"]  # no cached / thoughts counters
        out["usage"] = (prompt, response, None, None)
    if target == "ollama" and source_dialect != "ollama":
        out["calls"] = [(name, "", args) for name, _, args in out["calls"]]
    if target == "anthropic" and out["usage"] is not None:  # input/output_tokens required
        prompt, response, cached, thoughts = out["usage"]
        out["usage"] = (prompt or 0, response or 0, cached, thoughts)
    return out


def got(target: str, have: dict[str, Any], source_dialect: str | None) -> dict[str, Any]:
    out = dict(have)
    if target == "ollama" and source_dialect != "ollama":
        out["calls"] = [(name, "", args) for name, _, args in out["calls"]]
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rec", RECORDINGS)
def test_recording_through_target(rec: str, target: str) -> None:
    src = source(rec)
    assert src.dialect is not None
    back = read_back(convert(src, target), target)
    if src.error is not None:
        assert back.error is not None, "a failed stream must fail in the target too"
        if target in ("uni", "uni-jsonl"):
            assert type(back.error) is type(src.error)
        else:
            assert isinstance(back.error, (ProviderError, type(src.error)))
        assert src.error.message in back.error.message or back.error.message in src.error.message
        assert back.message.text == src.message.text[:len(back.message.text)]
        return
    assert back.error is None, back.error
    if SAME.get(src.dialect or "") == target or target in ("uni", "uni-jsonl"):
        a, b = src.message, back.message
        assert [item_to_dict(i) for i in b.items] == [item_to_dict(i) for i in a.items]
        assert usage_to_dict(b.usage_metadata) == usage_to_dict(a.usage_metadata)
        assert (b.finish_reason, b.id, b.model) == (a.finish_reason, a.id, a.model)
        return
    want = carried(target, summary(src.message), src.dialect)
    assert got(target, summary(back.message), src.dialect) == want
    secrets = opaque(src.message)
    if target == "gemini":  # a value that is no base64 rides aside (docs/ENCODERS.md)
        secrets = {v for v in secrets if is_base64(v)}
    if target != "ollama":  # every other target carries signatures and opaque reasoning
        assert opaque(back.message) == secrets
