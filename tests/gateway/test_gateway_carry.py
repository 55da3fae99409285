"""Replay state through a client of another dialect and back (sans-IO, every recording)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recordings import DATA, replay_state

from streamflow.core.errors import StreamflowError
from streamflow.core.message import Message
from streamflow.core.requests import ChatRequest, Turn
from streamflow.servers.gateway._carry import Carrier, pack, restore, unpack
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import get_encoder

FOLDERS = {"anthropic": "anthropic", "openai_chat": "openai-chat",
           "openai_responses": "openai-responses", "gemini": "gemini"}
CLIENTS = ("anthropic", "openai-chat", "openai-responses")


def recordings() -> list[tuple[str, Path]]:
    return [(dialect, p) for folder, dialect in FOLDERS.items()
            for p in sorted((DATA / folder).glob("*.sse"))]


def through(client: str, upstream: str, body: bytes) -> tuple[Message, Message] | None:
    """The upstream's message, and the one the client sends back, restored."""
    decoder = StreamDecoder(upstream)
    try:
        events = decoder.feed(body) + decoder.close()
    except StreamflowError:
        return None
    carrier, encoder = Carrier(client, upstream), get_encoder(client)()
    wire = b"".join(encoder.feed(carrier.event(e)) for e in events)
    seen = StreamDecoder(client)
    seen.feed(wire)
    seen.close()
    request = ChatRequest(turns=[Turn.assistant(seen.message)])
    back = restore(request).turns[0].parts
    return decoder.message, Message(items=list(back))  # type: ignore[arg-type]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(("upstream", "path"), recordings(), ids=lambda v: getattr(v, "name", v))
def test_replay_state_comes_back_to_the_upstream_unchanged(
        client: str, upstream: str, path: Path) -> None:
    if client == upstream:
        pytest.skip("same dialect: nothing is packed")
    result = through(client, upstream, path.read_bytes())
    if result is None:
        pytest.skip("a failing recording: no next turn")
    sent, returned = result
    expected = [s for s in replay_state(sent, ids=True) if not _empty_opaque(s)]
    got = [s for s in replay_state(returned, ids=True) if not _empty_opaque(s)]
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        if isinstance(theirs, dict) and len(theirs) == 1 and \
                next(iter(theirs)) in ("signature", "thought_signature"):
            # a bare signature rides natively: any signature key, the same bytes
            assert isinstance(mine, dict)
            assert (mine.get("thought_signature") or mine.get("signature")) == \
                next(iter(theirs.values()))
        elif isinstance(theirs, tuple) and len(theirs) == 2:  # opaque reasoning
            assert mine[0] == theirs[0]
            assert theirs[1] is None or mine[1] == theirs[1]
        else:
            assert mine == theirs


def _empty_opaque(entry: Any) -> bool:
    return isinstance(entry, tuple) and len(entry) == 2 and not entry[0]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_pack_unpack_is_the_identity(value: Any) -> None:
    token = pack(value)
    assert token.replace("_", "").replace("-", "").isalnum()
    assert unpack(token) == value


@given(st.text())
def test_text_that_is_not_a_token_unpacks_to_none(text: str) -> None:
    if not text.startswith("sf1_"):
        assert unpack(text) is None
