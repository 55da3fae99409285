"""One request through an official SDK (anthropic, openai chat, openai Responses), read back
as what a user sees: :class:`Seen` (text, tool calls, usage, finish reason).

``ask`` streams and takes the SDK's final object; ``ask_once`` sends ``stream: false``;
``leave_early`` reads a stream up to its first text and leaves. Requests are greedy
(temperature 0) so the same prompt gives the same answer whichever way it goes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

CLIENTS = ("anthropic", "openai-chat", "openai-responses")
MODEL = "smollm2"
WEATHER = {"name": "get_weather", "description": "Current weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}}
_FINISH = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_call",
           "stop": "stop", "length": "length", "tool_calls": "tool_call"}


@dataclass
class Seen:
    """What a user reads from the SDK's final object."""

    text: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    finish: str = ""
    created: int | None = None
    raw: Any = None


def _anthropic_client(url: str) -> Any:
    return anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)


def _openai_client(url: str) -> Any:
    return openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


def _turns(prompt: str, prefill: str | None) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    if prefill is not None:
        turns.append({"role": "assistant", "content": prefill})
    return turns


def _options(client: str, prompt: str, max_tokens: int, tools: bool,
             prefill: str | None) -> dict[str, Any]:
    if client == "anthropic":
        out: dict[str, Any] = {"model": MODEL, "max_tokens": max_tokens,
                               "extra_body": {"temperature": 0},  # no parameter in SDK 2.x
                               "messages": _turns(prompt, prefill)}
        if tools:
            out["tools"] = [{"name": WEATHER["name"], "description": WEATHER["description"],
                             "input_schema": WEATHER["parameters"]}]
            out["tool_choice"] = {"type": "any"}
        return out
    if client == "openai-chat":
        out = {"model": MODEL, "max_tokens": max_tokens, "temperature": 0,
               "messages": _turns(prompt, prefill)}
        if tools:
            out["tools"] = [{"type": "function", "function": WEATHER}]
            out["tool_choice"] = "required"
        return out
    out = {"model": MODEL, "max_output_tokens": max_tokens, "temperature": 0,
           "input": [{"type": "message", **turn} for turn in _turns(prompt, prefill)]
           if prefill is not None else prompt}
    if tools:
        out["tools"] = [{"type": "function", **WEATHER}]
        out["tool_choice"] = "required"
    return out


def prompt_tokens(usage: Any) -> int:
    """Anthropic's whole prompt: ``input_tokens`` leaves out the tokens read from or
    written to the cache (llama.cpp reuses its prompt cache across requests)."""
    return (usage.input_tokens + (usage.cache_read_input_tokens or 0)
            + (usage.cache_creation_input_tokens or 0))


def seen_anthropic(msg: Any) -> Seen:
    return Seen(text="".join(b.text for b in msg.content if b.type == "text"),
                calls=[(b.name, b.input) for b in msg.content if b.type == "tool_use"],
                usage=(prompt_tokens(msg.usage), msg.usage.output_tokens),
                finish=_FINISH.get(msg.stop_reason or "", str(msg.stop_reason)), raw=msg)


def seen_chat(completion: Any) -> Seen:
    choice = completion.choices[0]
    u = completion.usage
    return Seen(text=choice.message.content or "",
                calls=[(c.function.name, json.loads(c.function.arguments))
                       for c in choice.message.tool_calls or []],
                usage=None if u is None else (u.prompt_tokens, u.completion_tokens),
                finish=_FINISH.get(choice.finish_reason or "", str(choice.finish_reason)),
                created=completion.created, raw=completion)


def seen_responses(response: Any) -> Seen:
    out = response.output
    calls = [(o.name, json.loads(o.arguments)) for o in out if o.type == "function_call"]
    finish = str(response.status)
    if response.status == "completed":
        finish = "tool_call" if calls else "stop"
    elif response.incomplete_details and \
            response.incomplete_details.reason == "max_output_tokens":
        finish = "length"
    u = response.usage
    return Seen(text="".join(c.text for o in out if o.type == "message" for c in o.content
                             if c.type == "output_text"),
                calls=calls, usage=None if u is None else (u.input_tokens, u.output_tokens),
                finish=finish, created=int(response.created_at), raw=response)


async def ask(client: str, url: str, prompt: str, *, max_tokens: int = 24,
              tools: bool = False, prefill: str | None = None) -> Seen:
    """Stream ``prompt`` through ``client``'s SDK; the SDK's final object as :class:`Seen`."""
    options = _options(client, prompt, max_tokens, tools, prefill)
    if client == "anthropic":
        sdk = _anthropic_client(url)
        try:
            async with sdk.messages.stream(**options) as stream:
                return seen_anthropic(await stream.get_final_message())
        finally:
            await sdk.close()
    sdk = _openai_client(url)
    try:
        if client == "openai-chat":
            try:
                async with sdk.chat.completions.stream(
                        stream_options={"include_usage": True}, **options) as stream:
                    return seen_chat(await stream.get_final_completion())
            except openai.LengthFinishReasonError as exc:  # the SDK's own way to say length
                return seen_chat(exc.completion)
        last = None
        async with sdk.responses.stream(**options) as stream:
            async for event in stream:
                last = getattr(event, "response", last)
        return seen_responses(last)  # the final (or incomplete) response event's response
    finally:
        await sdk.close()


async def ask_once(client: str, url: str, prompt: str, *, max_tokens: int = 24,
                   **more: Any) -> Seen:
    """``prompt`` sent with ``stream: false`` through ``client``'s SDK."""
    options = {**_options(client, prompt, max_tokens, False, None), **more}
    if client == "anthropic":
        sdk = _anthropic_client(url)
        try:
            return seen_anthropic(await sdk.messages.create(**options))
        finally:
            await sdk.close()
    sdk = _openai_client(url)
    try:
        if client == "openai-chat":
            return seen_chat(await sdk.chat.completions.create(**options))
        return seen_responses(await sdk.responses.create(**options))
    finally:
        await sdk.close()


async def leave_early(client: str, url: str, prompt: str, *, max_tokens: int) -> str:
    """Stream ``prompt``, leave after the first text delta; return the text read so far."""
    options = _options(client, prompt, max_tokens, False, None)
    if client == "anthropic":
        sdk = _anthropic_client(url)
        try:
            async with sdk.messages.stream(**options) as stream:
                async for text in stream.text_stream:
                    if text:
                        return text
        finally:
            await sdk.close()
        return ""
    sdk = _openai_client(url)
    try:
        if client == "openai-chat":
            async with sdk.chat.completions.stream(**options) as chat:
                async for event in chat:
                    if event.type == "content.delta" and event.delta:
                        return str(event.delta)
            return ""
        async with sdk.responses.stream(**options) as responses:
            async for event in responses:
                if event.type == "response.output_text.delta" and event.delta:
                    return str(event.delta)
        return ""
    finally:
        await sdk.close()


def status_error_class() -> tuple[type[BaseException], ...]:
    """The SDK exceptions a non-2xx answer raises."""
    return (anthropic.APIStatusError, openai.APIStatusError)


async def ask_error(client: str, url: str, prompt: str, **more: Any) -> BaseException:
    """The exception the SDK raises for ``prompt`` (streamed), or a failure if none."""
    try:
        await ask(client, url, prompt, **more)
    except status_error_class() as exc:
        return exc
    raise AssertionError(f"{client}: no error for a request the server refuses")
