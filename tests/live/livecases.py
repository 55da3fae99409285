"""The cases recorded from a live llama.cpp ``llama-server`` (see tests/live/record.py).

Each :class:`Case` is one request: which server instance answers it (``plain``, the
model's own chat template, or ``tools``, started with a tool-use template), the
endpoint, and the JSON sent (``raw`` for a body that is not JSON on purpose). Every
request is greedy (temperature 0, fixed seed) unless it says otherwise, and small:
the recordings stay a few kilobytes each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CASES", "DIALECT", "Case", "WEATHER"]

DIALECT = {"/v1/chat/completions": "openai-chat", "/v1/messages": "anthropic",
           "/v1/responses": "openai-responses"}
"""Endpoint -> the streamflow dialect its answer is in."""

CHAT, MESSAGES, RESPONSES = "/v1/chat/completions", "/v1/messages", "/v1/responses"
GREEDY = {"temperature": 0, "seed": 42}
HELLO = "Say hello in one short sentence."
STORY = "Write a long story about a dragon."
WEATHER_Q = "What is the weather in Paris?"
BOTH_Q = "What is the weather in Paris and in London? Call get_weather once for each city."
PREFILL = "<tool_call>\n"
ONE_CALL = ["</tool_call>"]
"""A stop sequence ending the answer after one call (the tiny model repeats it)."""
WEATHER = {"name": "get_weather", "description": "Current weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                           "country": {"type": "string"}},
          "required": ["city", "country"], "additionalProperties": False}


@dataclass(frozen=True)
class Case:
    """One recorded request (see the module doc)."""

    name: str
    path: str
    body: dict[str, Any] = field(default_factory=dict)
    server: str = "plain"
    raw: bytes | None = None
    note: str = ""

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def dialect(self) -> str:
        return DIALECT[self.path]

    @property
    def file(self) -> str:
        """The body's file name: ``.sse`` for an event stream, ``.body`` for one JSON body
        (not ``.json``, so the stream corpus of tests/encoders/corpus.py leaves it out)."""
        return self.name + (".sse" if self.stream else ".body")


def _user(text: str, prefill: str | None = None) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": text}]
    if prefill is not None:
        turns.append({"role": "assistant", "content": prefill})
    return turns


def _chat(text: str, *, stream: bool, max_tokens: int = 32, prefill: str | None = None,
          **more: Any) -> dict[str, Any]:
    body = {"model": "smollm2", "messages": _user(text, prefill), "max_tokens": max_tokens,
            **GREEDY, **more, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def _messages(text: str, *, stream: bool, max_tokens: int = 32, prefill: str | None = None,
              **more: Any) -> dict[str, Any]:
    return {"model": "smollm2", "max_tokens": max_tokens, "messages": _user(text, prefill),
            **GREEDY, **more, "stream": stream}


def _responses(text: str, *, stream: bool, max_tokens: int = 32, prefill: str | None = None,
               **more: Any) -> dict[str, Any]:
    turns = [{"type": "message", **turn} for turn in _user(text, prefill)]
    return {"model": "smollm2", "input": text if prefill is None else turns,
            "max_output_tokens": max_tokens,
            **GREEDY, **more, "stream": stream}


_TOOLS_CHAT = {"tools": [{"type": "function", "function": WEATHER}], "tool_choice": "required"}
_TOOLS_MESSAGES = {"tools": [{"name": WEATHER["name"], "description": WEATHER["description"],
                              "input_schema": WEATHER["parameters"]}],
                   "tool_choice": {"type": "any"}}
_TOOLS_RESPONSES = {"tools": [{"type": "function", **WEATHER}], "tool_choice": "required"}
_ONE_CALL: dict[str, Any] = {"max_tokens": 48, "prefill": PREFILL}
_FORMAT = {"response_format": {"type": "json_schema", "json_schema": {
    "name": "place", "strict": True, "schema": SCHEMA}}}

CASES: list[Case] = [
    Case("chat_text", CHAT, _chat(HELLO, stream=True)),
    Case("chat_text", CHAT, _chat(HELLO, stream=False),
         note="the same greedy request as chat_text.sse, not streamed"),
    Case("chat_length", CHAT, _chat(STORY, stream=True, max_tokens=8)),
    Case("chat_n2", CHAT, _chat(HELLO, stream=False, n=2, temperature=0.9, seed=7)),
    Case("chat_n2", CHAT, _chat(HELLO, stream=True, n=2, temperature=0.9, seed=7)),
    Case("chat_schema", CHAT, _chat("Name a city and its country.", stream=True,
                                    max_tokens=48, **_FORMAT)),
    Case("chat_schema", CHAT, _chat("Name a city and its country.", stream=False,
                                    max_tokens=48, **_FORMAT)),
    Case("chat_bad_json", CHAT, {"stream": False}, raw=b'{"model": "smollm2", "messages": [',
         note="a body that is not JSON"),
    Case("chat_bad_field", CHAT, {"model": "smollm2", "messages": "hello", "stream": False},
         note="messages is a string"),
    Case("messages_text", MESSAGES, _messages(HELLO, stream=True)),
    Case("messages_text", MESSAGES, _messages(HELLO, stream=False)),
    Case("messages_length", MESSAGES, _messages(STORY, stream=True, max_tokens=8)),
    Case("messages_bad_field", MESSAGES,
         {"model": "smollm2", "max_tokens": 16, "stream": True,
          "messages": [{"role": "user", "content": 5}]},
         note="content is a number (llama.cpp answers an unknown block type with 200)"),
    Case("responses_text", RESPONSES, _responses(HELLO, stream=True)),
    Case("responses_text", RESPONSES, _responses(HELLO, stream=False)),
    Case("responses_length", RESPONSES, _responses(STORY, stream=True, max_tokens=8)),
    Case("responses_bad_field", RESPONSES, {"model": "smollm2", "input": 5, "stream": True},
         note="input is a number"),
    Case("chat_tool", CHAT, _chat(WEATHER_Q, stream=True, **_ONE_CALL, stop=ONE_CALL,
                                  **_TOOLS_CHAT), server="tools"),
    Case("chat_tool", CHAT, _chat(WEATHER_Q, stream=False, **_ONE_CALL, stop=ONE_CALL,
                                  **_TOOLS_CHAT), server="tools"),
    Case("messages_tool", MESSAGES, _messages(WEATHER_Q, stream=True, **_ONE_CALL,
                                              stop_sequences=ONE_CALL, **_TOOLS_MESSAGES),
         server="tools"),
    Case("messages_tool", MESSAGES, _messages(WEATHER_Q, stream=False, **_ONE_CALL,
                                              stop_sequences=ONE_CALL, **_TOOLS_MESSAGES),
         server="tools"),
    Case("responses_tool", RESPONSES, _responses(WEATHER_Q, stream=True, **_ONE_CALL,
                                                 stop=ONE_CALL, **_TOOLS_RESPONSES),
         server="tools"),
    Case("chat_parallel_tools", CHAT,
         _chat(BOTH_Q, stream=True, max_tokens=64, prefill=PREFILL, parallel_tool_calls=True,
               **_TOOLS_CHAT), server="tools"),
    Case("messages_parallel_tools", MESSAGES,
         _messages(BOTH_Q, stream=True, max_tokens=64, prefill=PREFILL, **_TOOLS_MESSAGES),
         server="tools", note="two tool_use blocks that overlap on the wire (issue 26 item 1)"),
]
