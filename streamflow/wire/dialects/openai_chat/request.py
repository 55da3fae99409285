"""OpenAI Chat Completions request side (``POST /v1/chat/completions``): parser and builder.

Parsed: ``system``/``developer`` messages (joined into the system prompt), ``user``
messages (text and ``image_url`` parts), ``assistant`` messages (``content``,
``tool_calls`` -- arguments ``""`` read as ``{}`` --, ``reasoning_details`` as
OpenRouter sends them back, else ``reasoning_content``/``reasoning`` text), ``tool``
messages (results); ``tools``, ``tool_choice``, ``parallel_tool_calls``,
``max_completion_tokens``/``max_tokens``, ``temperature``, ``top_p``, ``stop``,
``stream``, ``stream_options.include_usage``, ``reasoning_effort`` and OpenRouter's
``reasoning`` (``effort``/``max_tokens``); the neutral options ``response_format``,
``seed``, ``frequency_penalty``, ``presence_penalty``, ``user``, ``metadata``, ``n``.

Built: the mirror image. The assistant message carries the reasoning state a later
turn needs: ``reasoning_details`` (signed text entries, encrypted entries, in order)
when the items carry any, else the visible reasoning as ``reasoning_content``
(DeepSeek, llama.cpp and vLLM want it back within a tool exchange). A tool result
has no error flag here: an error result is sent as its text.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ....core.errors import RequestError
from ....core.events import (
    InlineDataItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ....core.requests import (
    ChatRequest,
    Part,
    Thinking,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Turn,
    effort_of,
)
from .._request_values import (
    add_parts,
    arguments_object,
    image_data_url,
    image_item,
    json_format,
    need,
    obj,
    obj_list,
    opt_bool,
    opt_float,
    opt_int,
    opt_str,
    shown,
    stop_list,
    text_of,
)
from ..request_base import RequestSide
from . import _models
from ._assistant import assistant_message, reasoning_items
from .reply import error_body, message_body

__all__ = ["REQUEST", "assistant_message", "build", "is_official", "parse",
           "reasoning_items"]

_OPTIONS = ("seed", "frequency_penalty", "presence_penalty", "user", "metadata", "n")
_KNOWN = frozenset({"model", "messages", "tools", "tool_choice", "parallel_tool_calls",
                    "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop",
                    "stream", "stream_options", "reasoning_effort", "reasoning",
                    "response_format", *_OPTIONS})


# -- parsing --------------------------------------------------------------------
def parse(body: Any) -> ChatRequest:
    """A Chat Completions request body as a :class:`ChatRequest`."""
    body = obj(body, "request")
    options = body.get("stream_options")
    if options is not None:
        obj(options, "stream_options")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    request = ChatRequest(model=str(body.get("model") or ""), source="openai-chat",
                          max_tokens=opt_int(max_tokens, "max_tokens"),
                          temperature=opt_float(body.get("temperature"), "temperature"),
                          top_p=opt_float(body.get("top_p"), "top_p"),
                          stop=stop_list(body.get("stop")),
                          stream=bool(body.get("stream", False)),
                          include_usage=bool(isinstance(options, dict)
                                             and options.get("include_usage")))
    system: list[str] = []
    for message in obj_list(need(body, "messages", "request"), "messages"):
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(text_of(message.get("content"), "system content"))
        elif role == "user":
            add_parts(request, "user", _user_parts(message.get("content")))
        elif role == "assistant":
            add_parts(request, "assistant", _assistant_parts(message))
        elif role == "tool":
            result = ToolResultPart(str(need(message, "tool_call_id", "tool message")),
                                    text_of(message.get("content"), "tool content"))
            add_parts(request, "user", [result])
        else:
            raise RequestError(f"unknown message role {role!r}")
    request.system = "\n\n".join(s for s in system if s) or None
    for tool in obj_list(body.get("tools"), "tools"):
        fn = obj(tool.get("function"), "tool function")
        request.tools.append(ToolSpec(str(need(fn, "name", "function")),
                                      str(fn.get("description") or ""),
                                      obj(fn.get("parameters") or {"type": "object",
                                                                   "properties": {}},
                                          "parameters"), opt_bool(fn.get("strict"), "strict")))
    request.tool_choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
    request.thinking = _thinking(body)
    _options(request, body)
    request.extra = {k: v for k, v in body.items() if k not in _KNOWN}
    return request


def _options(request: ChatRequest, body: JSONDict) -> None:
    """Record the neutral options the body sets (``ChatRequest.asked``)."""
    if request.stop:
        request.asked["stop"] = "stop"
    if request.tool_choice is not None and request.tool_choice.parallel is False:
        request.asked["parallel_tool_calls"] = "parallel_tool_calls"
    request.ask("response_format", "response_format",
                json_format(body.get("response_format"), "response_format"))
    request.ask("seed", "seed", opt_int(body.get("seed"), "seed"))
    for key in ("frequency_penalty", "presence_penalty"):
        request.ask(key, key, opt_float(body.get(key), key))
    request.ask("user", "user", opt_str(body.get("user"), "user"))
    if body.get("metadata") is not None:
        request.ask("metadata", "metadata", obj(body["metadata"], "metadata"))
    n = opt_int(body.get("n"), "n")
    if n is not None and n < 1:
        raise RequestError(f"n must be at least 1, not {n}")
    request.ask("n", "n", n if n != 1 else None)


def _user_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextItem("text.done", content)]
    parts: list[Part] = []
    for part in obj_list(content, "user content"):
        if part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            parts.append(image_item(str(url or "")))
        else:
            parts.append(TextItem("text.done", str(part.get("text") or "")))
    return parts


def _assistant_parts(message: JSONDict) -> list[Part]:
    parts: list[Part] = []
    details = message.get("reasoning_details")
    if details:
        parts += reasoning_items(obj_list(details, "reasoning_details"))
    else:
        text = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(text, str) and text:
            parts.append(ThinkingItem("thinking.done", text))
    content = text_of(message.get("content"), "assistant content")
    if content:
        parts.append(TextItem("text.done", content))
    for call in obj_list(message.get("tool_calls"), "tool_calls"):
        fn = obj(call.get("function"), "tool call function")
        extra = call.get("extra_content")
        parts.append(ToolCallItem("tool_call.done", str(need(fn, "name", "function")),
                                  str(call.get("id") or ""),
                                  arguments_object(fn.get("arguments"), "tool call"),
                                  {"extra_content": extra} if extra else None))
    return parts


def _tool_choice(choice: Any, parallel: Any) -> ToolChoice | None:
    par = None if parallel is None else bool(parallel)
    if choice is None:
        return None if par is None else ToolChoice("auto", None, par)
    if choice in ("auto", "none", "required"):
        return ToolChoice(choice, None, par)
    if not isinstance(choice, dict):
        raise RequestError("tool_choice must be 'auto', 'none', 'required' or "
                            f"{{\"type\": \"function\", \"function\": {{\"name\"}}}}, "
                            f"not {shown(choice)}")
    fn = obj(choice.get("function"), "tool_choice function")
    return ToolChoice("tool", str(need(fn, "name", "tool_choice")), par)


def _thinking(body: JSONDict) -> Thinking | None:
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("enabled", True) is not False \
            and (reasoning.get("effort") or reasoning.get("max_tokens")):
        return Thinking(opt_int(reasoning.get("max_tokens"), "reasoning.max_tokens"),
                        opt_str(reasoning.get("effort"), "reasoning.effort"))
    effort = opt_str(body.get("reasoning_effort"), "reasoning_effort")
    if isinstance(effort, str) and effort != "none":
        return Thinking(None, effort)
    return None


# -- building -------------------------------------------------------------------
def build(request: ChatRequest, *, max_tokens_key: str = "max_tokens") -> JSONDict:
    """A Chat Completions body for ``request``; the usage chunk is always asked for."""
    body: JSONDict = dict(request.extra) if request.source == "openai-chat" else {}
    conversation: list[JSONDict] = []
    if request.system:
        conversation.append({"role": "system", "content": request.system})
    for turn in request.turns:
        conversation += _messages(turn)
    body.update(model=request.model, messages=conversation, stream=request.stream)
    if request.stream:
        body["stream_options"] = {"include_usage": True}
    if request.max_tokens is not None:
        body[max_tokens_key] = request.max_tokens
    tools = [{"type": "function", "function": {
        "name": t.name, "description": t.description, "parameters": t.parameters,
        **({} if t.strict is None else {"strict": t.strict})}} for t in request.tools]
    if tools:
        body["tools"] = tools
    choice = request.tool_choice
    if choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": choice.name}} \
            if choice.mode == "tool" else choice.mode
        if choice.parallel is not None and tools:
            body["parallel_tool_calls"] = choice.parallel
    for key, value in (("temperature", request.temperature), ("top_p", request.top_p)):
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop"] = list(request.stop)
    if request.thinking is not None:
        body["reasoning_effort"] = effort_of(request.thinking)
    fmt = request.options.get("response_format")
    if fmt is not None:
        body["response_format"] = _chat_format(fmt)
    body.update((k, request.options[k]) for k in _OPTIONS if k in request.options)
    return body


def _chat_format(fmt: JSONDict) -> JSONDict:
    if fmt["type"] != "json_schema":
        return {"type": fmt["type"]}
    return {"type": "json_schema",
            "json_schema": {k: v for k, v in fmt.items() if k != "type"}}


def is_official(base_url: str) -> bool:
    """Whether ``base_url`` is OpenAI's own API (``api.openai.com``), not a compatible server."""
    return urlsplit(base_url).hostname == "api.openai.com"


def _tune(body: JSONDict, base_url: str) -> None:
    """OpenAI's own API wants ``max_completion_tokens`` (reasoning models refuse
    ``max_tokens``); compatible servers know ``max_tokens``."""
    if is_official(base_url) and "max_tokens" in body:
        body["max_completion_tokens"] = body.pop("max_tokens")


def _messages(turn: Turn) -> list[JSONDict]:
    if turn.role == "assistant":
        return [assistant_message(turn.parts)]
    out: list[JSONDict] = []
    content: list[JSONDict] = []
    images: list[JSONDict] = []
    for part in turn.parts:
        if isinstance(part, ToolResultPart):
            out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.text})
            if not isinstance(part.content, str):  # a tool message is text: its images after
                images += [{"type": "image_url", "image_url": {"url": image_data_url(p)}}
                           for p in part.content if isinstance(p, InlineDataItem)
                           and p.mime_type.startswith("image/")]
        elif isinstance(part, TextItem):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, InlineDataItem):
            content.append({"type": "image_url", "image_url": {"url": image_data_url(part)}})
    if images:
        content[:0] = [{"type": "text", "text": "The images the tool calls returned:"}, *images]
    if content:
        only_text = all(c["type"] == "text" for c in content)
        out.append({"role": "user", "content": "".join(c["text"] for c in content)
                    if only_text else content})
    return out




REQUEST = RequestSide(
    name="openai-chat", build=build, parse=parse, path="/chat/completions",
    client_path="/v1/chat/completions", credential="authorization", bearer=True,
    error_body=error_body, reply=message_body, tune=_tune,
    takes=frozenset({"max_tokens", "temperature", "top_p", "stop", "tools", "tool_choice",
                     "parallel_tool_calls", "thinking", "response_format", "seed",
                     "frequency_penalty", "presence_penalty", "user", "metadata", "n"}),
    models_path=_models.MODELS_PATH, read_models=_models.read_models,
    client_models_path="/v1/models", models_body=_models.models_body)
"""The request side of OpenAI chat (see :mod:`streamflow.wire.dialects.request_base`)."""
