"""The official SDK of each target reads our bytes to the same content.

Every recording (tests/data/ and ../shared/fixtures/real/) that ends with ``stop``
x every target with an official SDK: text, thinking, tool calls (name, id,
arguments), usage, finish reason and the opaque reasoning values (signatures,
redacted/encrypted data) the user must send back. Items of other choices or
candidates (``n > 1``) are left out: the SDKs read choice 0. Failed recordings are
in test_errors.py.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from corpus import RECORDINGS, convert, opaque, source
from sdks import READERS

from streamflow.core.events import TextItem, ThinkingItem, ToolCallItem
from streamflow.core.message import Message
from streamflow.wire.dialects.gemini.encode import is_base64

SDK_TARGETS = list(READERS)


def expected(msg: Message, target: str) -> dict[str, Any]:
    # n > 1: the SDK user reads choice 0 (a target without choices carries only it)
    items = msg.choice(0).items
    u = msg.usage_metadata
    usage: Any = None if u is None else (u.prompt_tokens, u.response_tokens)
    if target == "anthropic":
        usage = (usage[0] or 0, usage[1] or 0) if usage else (0, 0)
    if usage == (None, None):
        usage = None
    calls = [(i.name, None if target == "gemini" and (i.provider or {}).get("synthetic_id")
              else i.tool_call_id, i.arguments)
             for i in items if isinstance(i, ToolCallItem) and i.type == "tool_call.done"]
    texts = [i for i in items if isinstance(i, TextItem)]
    if target == "openai-chat":  # the SDK keeps content and refusal apart
        texts = [i for i in texts if not (i.provider or {}).get("refusal")] + [
            i for i in texts if (i.provider or {}).get("refusal")]
    secrets = opaque(msg)
    if target == "gemini":  # bytes to google-genai: only base64 values are signatures
        secrets = {base64.b64encode(base64.urlsafe_b64decode(
            v.replace("+", "-").replace("/", "_") + "=" * (-len(v) % 4))).decode()
            for v in secrets if is_base64(v)}
    return {
        "text": "".join(i.text for i in texts),
        "thinking": "".join(i.thinking for i in items if isinstance(i, ThinkingItem)),
        "calls": calls,
        "usage": usage,
        "finish": msg.finish_reason,
        "opaque": secrets,
    }


@pytest.mark.parametrize("target", SDK_TARGETS)
@pytest.mark.parametrize("rec", RECORDINGS)
def test_official_sdk_reads_the_same_content(rec: str, target: str) -> None:
    src = source(rec)
    if src.error is not None:
        pytest.skip("a failed stream: see test_errors.py")
    theirs = READERS[target](convert(src, target))
    want = expected(src.message, target)
    if target == "gemini" and want["usage"] is not None and want["usage"][1] is None:
        want["usage"] = (want["usage"][0], 0)
    assert theirs == want
