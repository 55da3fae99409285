"""The reference points streamflow is measured against, each reading the same chunk list.

* the official SDK stream helpers, served the chunks through ``httpx.MockTransport``:
  ``anthropic``'s ``client.messages.stream(...)`` -> ``get_final_message()`` and
  ``openai``'s ``client.chat.completions.stream(...)`` -> ``get_final_completion()``
  (with strict function tools, so it keeps ``parsed_arguments`` live as it would for
  an application that asked for them);
* a naive hand loop: split lines, ``json.loads`` each ``data:`` payload, append strings;
* the parse floor: ``orjson.loads`` of every JSON payload, already cut out of the body.

Every anchor returns an :class:`Outcome` so the tests can check it read the stream
the same way streamflow did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = [
    "Outcome",
    "anthropic_sdk",
    "httpx_read",
    "naive",
    "openai_sdk",
    "orjson_floor",
]


@dataclass(slots=True)
class Outcome:
    """What a path read: text, thinking and tool calls ``(id, name, arguments)``."""

    text: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)


def mock_client(chunks: list[bytes], http: Any = httpx) -> Any:
    """A ``Client`` of ``http`` (``httpx``, or ``httpx2`` that the SDKs use) serving ``chunks``.

    Every request gets a 200 ``text/event-stream`` response whose body yields the
    chunks one by one, through ``MockTransport``.
    """

    class Chunks(http.SyncByteStream):  # type: ignore[misc,name-defined]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"},
                             stream=Chunks(), request=request)

    return http.Client(transport=http.MockTransport(handler))


def httpx_read(chunks: list[bytes], dialect: str) -> Outcome:
    """Only read the body through the SDKs' mock transport (``httpx2``): the transport's cost."""
    import httpx2

    with mock_client(chunks, httpx2) as client:
        with client.stream("POST", "http://bench.invalid/") as response:
            for _ in response.iter_bytes():
                pass
    return Outcome()


# -- official SDK helpers -------------------------------------------------------------------

def anthropic_sdk(chunks: list[bytes], dialect: str = "anthropic") -> Outcome:
    """``client.messages.stream(...)`` -> ``get_final_message()``."""
    import anthropic
    import httpx2

    with mock_client(chunks, httpx2) as http:
        client = anthropic.Anthropic(api_key="bench", base_url="http://bench.invalid",
                                     http_client=http, max_retries=0)
        with client.messages.stream(model="claude-bench-4", max_tokens=64_000,
                                    messages=[{"role": "user", "content": "go"}]) as stream:
            msg = stream.get_final_message()
    out = Outcome()
    for block in msg.content:
        if block.type == "text":
            out.text += block.text
        elif block.type == "thinking":
            out.thinking += block.thinking
        elif block.type == "tool_use":
            out.tool_calls.append((block.id, block.name, dict(block.input)))  # type: ignore[arg-type]
    return out


def _strict_tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "strict": True,
        "parameters": {"type": "object", "properties": {}, "additionalProperties": True}}}


def openai_sdk(chunks: list[bytes], dialect: str = "openai-chat", *,
               strict_tools: bool = False) -> Outcome:
    """``client.chat.completions.stream(...)`` -> ``get_final_completion()``.

    ``strict_tools=True`` passes strict function tools, so the helper keeps each call's
    ``parsed_arguments`` live (one partial parse of the whole buffer per fragment). It
    cannot read calls whose fragments interleave then: it takes a call as finished as
    soon as another index appears and parses its arguments, which are still cut.
    """
    import httpx2
    import openai

    extra: Any = {}
    if strict_tools:
        extra["tools"] = [_strict_tool(n) for n in ("write_file", "search_code")]
    with mock_client(chunks, httpx2) as http:
        client = openai.OpenAI(api_key="bench", base_url="http://bench.invalid/v1",
                               http_client=http, max_retries=0)
        with client.chat.completions.stream(model="openai/gpt-bench", **extra,
                                            messages=[{"role": "user", "content": "go"}]) as s:
            done = s.get_final_completion()
    message = done.choices[0].message
    out = Outcome(text=message.content or "",
                  thinking=str(getattr(message, "reasoning", None) or ""))
    for call in message.tool_calls or []:
        function = call.function  # type: ignore[union-attr]
        out.tool_calls.append((call.id, function.name, json.loads(function.arguments)))
    return out


# -- naive hand loop --------------------------------------------------------------------------

def _lines(chunks: list[bytes]) -> Iterator[bytes]:
    """``data:`` payloads of the body, by splitting lines (no full SSE rules)."""
    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            if line.startswith(b"data: "):
                yield line[6:]


def _naive_anthropic(chunks: list[bytes]) -> Outcome:
    text: list[str] = []
    thinking: list[str] = []
    args: dict[int, list[str]] = {}
    heads: dict[int, tuple[str, str]] = {}
    for payload in _lines(chunks):
        ev = json.loads(payload)
        kind = ev["type"]
        if kind == "content_block_delta":
            delta = ev["delta"]
            dtype = delta["type"]
            if dtype == "text_delta":
                text.append(delta["text"])
            elif dtype == "thinking_delta":
                thinking.append(delta["thinking"])
            elif dtype == "input_json_delta":
                args[ev["index"]].append(delta["partial_json"])
        elif kind == "content_block_start":
            block = ev["content_block"]
            if block["type"] == "tool_use":
                heads[ev["index"]] = (block["id"], block["name"])
                args[ev["index"]] = []
    calls = [(*heads[i], json.loads("".join(args[i]))) for i in sorted(heads)]
    return Outcome("".join(text), "".join(thinking), calls)


def _naive_openai(chunks: list[bytes]) -> Outcome:
    text: list[str] = []
    thinking: list[str] = []
    args: dict[int, list[str]] = {}
    heads: dict[int, tuple[str, str]] = {}
    for payload in _lines(chunks):
        if payload == b"[DONE]":
            break
        chunk = json.loads(payload)
        for choice in chunk["choices"]:
            delta = choice["delta"]
            if delta.get("content"):
                text.append(delta["content"])
            if delta.get("reasoning"):
                thinking.append(delta["reasoning"])
            for call in delta.get("tool_calls") or ():
                index = call["index"]
                if call.get("id"):
                    heads[index] = (call["id"], call["function"]["name"])
                    args[index] = []
                args[index].append(call["function"].get("arguments") or "")
    calls = [(*heads[i], json.loads("".join(args[i]))) for i in sorted(heads)]
    return Outcome("".join(text), "".join(thinking), calls)


def naive(chunks: list[bytes], dialect: str) -> Outcome:
    """The naive hand loop for ``dialect``."""
    return _naive_anthropic(chunks) if dialect == "anthropic" else _naive_openai(chunks)


# -- the parse floor --------------------------------------------------------------------------

def orjson_floor(payloads: list[bytes]) -> int:
    """``orjson.loads`` of every payload, nothing else; returns how many were parsed."""
    import orjson

    loads = orjson.loads
    for payload in payloads:
        loads(payload)
    return len(payloads)
