"""``drop_unsupported``: one log line per dropped option, bounded, the names inert."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("starlette", reason="the gateway extra is not installed")

from streamflow.servers.gateway import Gateway, Upstream
from streamflow.servers.gateway._app import DROP_LINES
from streamflow.wire.dialects import get_request


def test_one_line_per_dropped_option_and_no_more_than_drop_lines(
        caplog: pytest.LogCaptureFixture) -> None:
    gateway = Gateway(Upstream("http://127.0.0.1:9", "anthropic"), drop_unsupported=True)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 1,
            **{f"x{i}\x1b[2J": i for i in range(40)}}
    chat = get_request("openai-chat").parse(body)  # type: ignore[misc]
    with caplog.at_level(logging.INFO, logger="streamflow.servers.gateway"):
        gateway.check(chat)
    records = [r for r in caplog.records if r.getMessage().startswith("dropped")]
    lines = [r.getMessage() for r in records]
    assert {(r.name, r.levelno) for r in records} == {("streamflow.servers.gateway", logging.INFO)}
    assert len(lines) == DROP_LINES + 1
    assert lines[0] == "dropped 'seed': the anthropic upstream cannot carry it"
    assert lines[1] == "dropped 'x0\\x1b[2J': the anthropic upstream cannot carry it"
    assert lines[-1] == f"dropped {41 - DROP_LINES} more options the anthropic upstream " \
                        "cannot carry"
    assert "seed" not in chat.asked and not chat.extra  # every one dropped, logged or not
