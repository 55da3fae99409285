"""One streamed request through the gateway with each official SDK (and raw, for the bytes)."""

from __future__ import annotations

import json
from typing import Any

import httpx

ASK = [{"role": "user", "content": "hi"}]


async def anthropic_final(url: str, **options: Any) -> Any:
    """``messages.stream(...).get_final_message()`` of the anthropic SDK."""
    import anthropic
    client = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)
    try:
        async with client.messages.stream(model="m", max_tokens=64,
                                          messages=options.pop("messages", ASK),
                                          **options) as stream:
            return await stream.get_final_message()
    finally:
        await client.close()


async def chat_final(url: str, **options: Any) -> Any:
    """``chat.completions.stream(...).get_final_completion()`` of the openai SDK."""
    import openai
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    try:
        async with client.chat.completions.stream(
                model="m", messages=options.pop("messages", ASK),
                stream_options={"include_usage": True}, **options) as stream:
            return await stream.get_final_completion()
    finally:
        await client.close()


async def responses_final(url: str, **options: Any) -> Any:
    """``responses.stream(...).get_final_response()`` of the openai SDK."""
    import openai
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    try:
        async with client.responses.stream(model="m", input=options.pop("input", "hi"),
                                           **options) as stream:
            return await stream.get_final_response()
    finally:
        await client.close()


CLIENT_BODIES = {
    "/v1/messages": {"model": "m", "max_tokens": 64, "messages": ASK, "stream": True},
    "/v1/chat/completions": {"model": "m", "messages": ASK, "stream": True},
    "/v1/responses": {"model": "m", "input": "hi", "stream": True},
}


async def raw_events(url: str, path: str) -> list[tuple[str | None, Any]]:
    """The gateway's answer on ``path`` as ``(event name, data JSON)`` pairs; an HTTP error
    (a failure before any output) as ``[("error", its envelope)]``."""
    async with httpx.AsyncClient() as client:
        response = await client.post(url + path, json=CLIENT_BODIES[path])
    if response.status_code >= 400:  # failed before any output: the error alone, as a status
        return [("error", response.json())]
    out: list[tuple[str | None, Any]] = []
    for block in response.text.split("\n\n"):
        name, data = None, None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        if data is not None:
            out.append((name, data if data == "[DONE]" else json.loads(data)))
    return out


def check_anthropic_grammar(events: list[tuple[str | None, Any]]) -> None:
    """What the anthropic SDK (and Claude Code) rely on, checked event by event."""
    names = [n for n, _ in events]
    if names == ["error"]:  # failed before its first event: the error alone
        return
    assert names[0] == "message_start", names[:3]
    assert names[-1] in ("message_stop", "error"), names[-3:]
    open_block: dict[str, Any] | None = None
    next_index = 0
    kinds = {"text_delta": "text", "citations_delta": "text", "thinking_delta": "thinking",
             "signature_delta": "thinking", "input_json_delta": "tool_use"}
    for name, data in events:
        assert data["type"] == name, (name, data)
        if name == "content_block_start":
            assert open_block is None, "a block started inside another"
            assert data["index"] == next_index, "block indices must count up from 0"
            open_block = data["content_block"]
            next_index += 1
        elif name == "content_block_delta":
            assert open_block is not None and data["index"] == next_index - 1, \
                "Content block not found"
            wanted = kinds.get(data["delta"]["type"])
            assert wanted is None or wanted == open_block["type"], (data, open_block)
            if data["delta"]["type"] == "signature_delta":
                assert data["delta"]["signature"], "an empty signature"
        elif name == "content_block_stop":
            assert open_block is not None and data["index"] == next_index - 1
            open_block = None
        elif name in ("message_delta", "message_stop", "error"):
            assert open_block is None or name == "error", "message ended inside a block"
