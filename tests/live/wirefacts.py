"""What a recorded body says, read by hand from its JSON: the oracle of test_recorded.py.

No streamflow code is used: the SSE events are split on blank lines and each
dialect's fields are read where its API reference puts them (blocks and calls by
their index, so overlapping blocks read as they are meant). :func:`facts` gives
text, tool calls ``(name, arguments)`` in index order, usage ``(prompt, response)``
and the finish reason in streamflow's words (``stop``, ``length``, ``tool_call``).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["body_facts", "events", "facts"]

_CHAT = {"stop": "stop", "length": "length", "tool_calls": "tool_call"}
_ANTHROPIC = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_call",
              "stop_sequence": "stop"}


def events(body: bytes) -> list[tuple[str | None, Any]]:
    """``(event name, data JSON)`` of each SSE event (``[DONE]`` kept as the string)."""
    out: list[tuple[str | None, Any]] = []
    for block in body.decode().replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            text = "\n".join(data)
            out.append((name, text if text == "[DONE]" else json.loads(text)))
    return out


def _args(text: str) -> Any:
    return json.loads(text) if text.strip() else {}


def _chat(stream: list[Any]) -> dict[str, Any]:
    text, calls, usage, finish = "", {}, None, None
    for chunk in stream:
        if chunk.get("usage"):
            usage = (chunk["usage"]["prompt_tokens"], chunk["usage"]["completion_tokens"])
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                name, args = calls.get(call["index"], ("", ""))
                fn = call.get("function") or {}
                calls[call["index"]] = (name + (fn.get("name") or ""),
                                        args + (fn.get("arguments") or ""))
            finish = choice.get("finish_reason") or finish
    return {"text": text, "calls": [(n, _args(a)) for _, (n, a) in sorted(calls.items())],
            "usage": usage, "finish": _CHAT.get(finish or "", finish)}


def _anthropic(stream: list[Any]) -> dict[str, Any]:
    blocks: dict[int, dict[str, Any]] = {}
    prompt = output = 0
    finish = None
    for data in stream:
        kind = data.get("type")
        if kind == "message_start":
            u = data["message"]["usage"]
            prompt = u["input_tokens"] + (u.get("cache_read_input_tokens") or 0) \
                + (u.get("cache_creation_input_tokens") or 0)
            output = u.get("output_tokens") or 0
        elif kind == "content_block_start":
            blocks[data["index"]] = {**data["content_block"], "json": ""}
        elif kind == "content_block_delta":
            delta, block = data["delta"], blocks[data["index"]]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "input_json_delta":
                block["json"] += delta["partial_json"]
        elif kind == "message_delta":
            finish = data["delta"].get("stop_reason") or finish
            output = data.get("usage", {}).get("output_tokens", output)
    ordered = [blocks[i] for i in sorted(blocks)]
    return {"text": "".join(b.get("text", "") for b in ordered if b["type"] == "text"),
            "calls": [(b["name"], _args(b["json"])) for b in ordered if b["type"] == "tool_use"],
            "usage": (prompt, output), "finish": _ANTHROPIC.get(finish or "", finish)}


def _responses(stream: list[Any]) -> dict[str, Any]:
    final = next((d["response"] for d in reversed(stream)
                  if d.get("type") in ("response.completed", "response.incomplete")), None)
    text = "".join(d["delta"] for d in stream if d.get("type") == "response.output_text.delta")
    done = [d for d in stream if d.get("type") == "response.output_item.done"]
    # llama.cpp leaves out output_index: its items come in order
    calls = {d.get("output_index", n): d["item"] for n, d in enumerate(done)
             if d["item"].get("type") == "function_call"}
    out: dict[str, Any] = {"text": text, "calls": [(c["name"], _args(c["arguments"]))
                                                  for _, c in sorted(calls.items())],
                           "usage": None, "finish": None}
    if final is not None:
        u = final.get("usage") or {}
        out["usage"] = (u.get("input_tokens"), u.get("output_tokens"))
        if final["status"] == "completed":
            out["finish"] = "tool_call" if out["calls"] else "stop"
        elif (final.get("incomplete_details") or {}).get("reason") == "max_output_tokens":
            out["finish"] = "length"
    return out


def facts(dialect: str, body: bytes) -> dict[str, Any]:
    """Text, calls, usage and finish reason of a streamed body of ``dialect``."""
    stream = [data for _, data in events(body) if data != "[DONE]"]
    return {"openai-chat": _chat, "anthropic": _anthropic,
            "openai-responses": _responses}[dialect](stream)


def body_facts(dialect: str, body: Any) -> dict[str, Any]:
    """The same facts of a non-streamed JSON body (the first choice of a chat completion)."""
    if dialect == "openai-chat":
        choice, u = body["choices"][0], body["usage"]
        calls = [(c["function"]["name"], _args(c["function"]["arguments"]))
                 for c in choice["message"].get("tool_calls") or []]
        return {"text": choice["message"].get("content") or "", "calls": calls,
                "usage": (u["prompt_tokens"], u["completion_tokens"]),
                "finish": _CHAT.get(choice["finish_reason"], choice["finish_reason"])}
    if dialect == "anthropic":
        u = body["usage"]
        prompt = u["input_tokens"] + (u.get("cache_read_input_tokens") or 0) \
            + (u.get("cache_creation_input_tokens") or 0)
        return {"text": "".join(b["text"] for b in body["content"] if b["type"] == "text"),
                "calls": [(b["name"], b["input"]) for b in body["content"]
                          if b["type"] == "tool_use"],
                "usage": (prompt, u["output_tokens"]),
                "finish": _ANTHROPIC.get(body["stop_reason"], body["stop_reason"])}
    items = body["output"]
    calls = [(i["name"], _args(i["arguments"])) for i in items if i["type"] == "function_call"]
    finish = "tool_call" if calls else "stop"
    if body["status"] != "completed":
        finish = "length" if (body.get("incomplete_details") or {}).get(
            "reason") == "max_output_tokens" else body["status"]
    return {"text": "".join(c["text"] for i in items if i["type"] == "message"
                            for c in i["content"] if c["type"] == "output_text"),
            "calls": calls,
            "usage": (body["usage"]["input_tokens"], body["usage"]["output_tokens"]),
            "finish": finish}
