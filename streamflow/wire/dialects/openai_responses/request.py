"""OpenAI Responses request side (``POST /v1/responses``): parser and builder.

Parsed: ``instructions`` and ``system``/``developer`` messages (the system prompt),
``input`` as a string or a list of items -- messages (``input_text``,
``output_text``, ``input_image``), ``function_call`` (arguments ``""`` read as
``{}``), ``function_call_output``, and ``reasoning`` items (each summary part a
``ThinkingItem``, then the ``encrypted_content`` as an ``InlineThinkingItem`` with
``fidelity={"id": ...}``, as the decoder maps them); ``tools`` (function tools;
others stay in ``extra``), ``tool_choice``, ``parallel_tool_calls``,
``max_output_tokens``, ``temperature``, ``top_p``, ``stream``, ``reasoning.effort``,
and the neutral options ``response_format`` (``text.format``), ``user``, ``metadata``.

Built: the mirror image; a reasoning item is written from the summaries and the
encrypted part that follow each other (its ``id`` from the fidelity, else from the
summaries' ``provider["item_id"]``; reasoning with neither came from another
provider and is left out). When reasoning is asked for, ``include`` asks for the
encrypted content so a later turn can send it back. The dialect has no stop
sequences (``takes`` says so: a request asking for them is refused, see
:meth:`~streamflow.wire.dialects.request_base.RequestSide.unsupported`).
"""

from __future__ import annotations

from typing import Any

from ....core.errors import RequestError
from ....core.events import (
    InlineDataItem,
    InlineThinkingItem,
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
    arguments_text,
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
    text_of,
)
from ..openai_chat import _models as openai_models
from ..openai_chat.reply import error_body
from ..request_base import RequestSide
from .reply import message_body

__all__ = ["REQUEST", "build", "parse"]

_KNOWN = frozenset({"model", "input", "instructions", "tools", "tool_choice",
                    "parallel_tool_calls", "max_output_tokens", "temperature", "top_p",
                    "stream", "reasoning", "include", "user", "metadata"})
_ENCRYPTED = "reasoning.encrypted_content"


# -- parsing --------------------------------------------------------------------
def parse(body: Any) -> ChatRequest:
    """A Responses request body as a :class:`ChatRequest`."""
    body = obj(body, "request")
    request = ChatRequest(model=str(body.get("model") or ""), source="openai-responses",
                          max_tokens=opt_int(body.get("max_output_tokens"), "max_output_tokens"),
                          temperature=opt_float(body.get("temperature"), "temperature"),
                          top_p=opt_float(body.get("top_p"), "top_p"),
                          stream=bool(body.get("stream", False)), include_usage=True)
    system = [text_of(body.get("instructions"), "instructions")]
    items = need(body, "input", "request")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in obj_list(items, "input"):
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in ("system", "developer"):
            system.append(text_of(item.get("content"), "system content"))
        elif kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant"):
                raise RequestError(f"unknown message role {role!r}")
            add_parts(request, role, _message_parts(item.get("content")))
        elif kind == "function_call":
            call = ToolCallItem("tool_call.done", str(need(item, "name", "function_call")),
                                str(need(item, "call_id", "function_call")),
                                arguments_object(item.get("arguments"), "function_call"),
                                provider={"item_id": item["id"]} if item.get("id") else None)
            add_parts(request, "assistant", [call])
        elif kind == "function_call_output":
            output = item.get("output")
            result = ToolResultPart(str(need(item, "call_id", "function_call_output")),
                                    output if isinstance(output, str)
                                    else text_of(output, "function_call_output"))
            add_parts(request, "user", [result])
        elif kind == "reasoning":
            add_parts(request, "assistant", _reasoning(item))
        else:
            raise RequestError(f"unsupported input item type {kind!r}")
    request.system = "\n\n".join(s for s in system if s) or None
    other_tools: list[JSONDict] = []
    for tool in obj_list(body.get("tools"), "tools"):
        if tool.get("type") == "function":
            request.tools.append(ToolSpec(str(need(tool, "name", "tool")),
                                          str(tool.get("description") or ""),
                                          obj(tool.get("parameters") or {}, "parameters"),
                                          # absent: the API's default, strict
                                          opt_bool(tool.get("strict", True), "strict")))
        else:
            other_tools.append(tool)
    request.tool_choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort") not in (None, "none"):
        request.thinking = Thinking(None, opt_str(reasoning["effort"], "reasoning.effort"))
    request.extra = {k: v for k, v in body.items() if k not in _KNOWN}
    if other_tools:
        request.extra["other_tools"] = other_tools
    _options(request, body)
    return request


def _options(request: ChatRequest, body: JSONDict) -> None:
    """Record the neutral options the body sets (``ChatRequest.asked``)."""
    if request.tool_choice is not None and request.tool_choice.parallel is False:
        request.asked["parallel_tool_calls"] = "parallel_tool_calls"
    text = request.extra.get("text")
    if text is not None:
        text = dict(obj(text, "text"))  # a copy: the client's body stays as it came
        request.ask("response_format", "text.format", json_format(text.pop("format", None),
                                                                  "text.format"))
        if text:  # verbosity...: the dialect's own, put back by this builder only
            request.extra["text"] = text
        else:
            del request.extra["text"]
    request.ask("user", "user", opt_str(body.get("user"), "user"))
    if body.get("metadata") is not None:
        request.ask("metadata", "metadata", obj(body["metadata"], "metadata"))


def _message_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextItem("text.done", content)]
    parts: list[Part] = []
    for part in obj_list(content, "message content"):
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(TextItem("text.done", str(part.get("text") or "")))
        elif kind == "refusal":
            parts.append(TextItem("text.done", str(part.get("refusal") or ""),
                                  provider={"refusal": True}))
        elif kind == "input_image":
            parts.append(image_item(str(part.get("image_url") or "")))
        else:
            raise RequestError(f"unsupported content part type {kind!r}")
    return parts


def _reasoning(item: JSONDict) -> list[Part]:
    item_id = str(item.get("id") or "")
    provider = {"item_id": item_id} if item_id else None
    parts: list[Part] = [ThinkingItem("thinking.done", str(s.get("text") or ""), None, provider)
                         for s in obj_list(item.get("summary"), "reasoning summary")]
    encrypted = item.get("encrypted_content")
    parts.append(InlineThinkingItem("inline_thinking.done", str(encrypted or "").encode(),
                                    {"id": item_id} if item_id else None))
    return parts


def _tool_choice(choice: Any, parallel: Any) -> ToolChoice | None:
    par = None if parallel is None else bool(parallel)
    if choice is None:
        return None if par is None else ToolChoice("auto", None, par)
    if choice in ("auto", "none", "required"):
        return ToolChoice(choice, None, par)
    if not isinstance(choice, dict):
        raise RequestError("tool_choice must be 'auto', 'none', 'required' or "
                            f"{{\"type\": \"function\", \"name\"}}, not {shown(choice)}")
    return ToolChoice("tool", str(need(choice, "name", "tool_choice")), par)


# -- building -------------------------------------------------------------------
def build(request: ChatRequest) -> JSONDict:
    """A Responses request body for ``request``."""
    body: JSONDict = dict(request.extra) if request.source == "openai-responses" else {}
    other_tools = body.pop("other_tools", [])
    items: list[JSONDict] = []
    for turn in request.turns:
        items += _items(turn)
    body.update(model=request.model, input=items, stream=request.stream)
    if request.system:
        body["instructions"] = request.system
    tools = [{"type": "function", "name": t.name, "description": t.description,
              "parameters": t.parameters, "strict": bool(t.strict)}  # the API's default is strict
             for t in request.tools] + list(other_tools)
    if tools:
        body["tools"] = tools
    choice = request.tool_choice
    if choice is not None:
        body["tool_choice"] = {"type": "function", "name": choice.name} \
            if choice.mode == "tool" else choice.mode
        if choice.parallel is not None:
            body["parallel_tool_calls"] = choice.parallel
    for key, value in (("max_output_tokens", request.max_tokens),
                       ("temperature", request.temperature), ("top_p", request.top_p)):
        if value is not None:
            body[key] = value
    reasons = any(i["type"] == "reasoning" for i in items)
    if request.thinking is not None:
        body["reasoning"] = {"effort": effort_of(request.thinking), "summary": "auto"}
    if request.thinking is not None or reasons:
        include = list(body.get("include") or [])
        body["include"] = include + ([_ENCRYPTED] if _ENCRYPTED not in include else [])
    fmt = request.options.get("response_format")
    if fmt is not None:
        body["text"] = {**(body.get("text") or {}), "format": dict(fmt)}
    for key in ("user", "metadata"):
        if key in request.options:
            body[key] = request.options[key]
    return body


def _items(turn: Turn) -> list[JSONDict]:
    out: list[JSONDict] = []
    summaries: list[ThinkingItem] = []
    content: list[JSONDict] = []

    def flush_content() -> None:
        if content:  # an assistant's text goes back as the easy form: a string
            value: Any = "".join(c["text"] for c in content) if turn.role == "assistant" \
                else list(content)
            out.append({"type": "message", "role": turn.role, "content": value})
            content.clear()

    for part in turn.parts:
        if isinstance(part, ThinkingItem):
            summaries.append(part)
            continue
        if isinstance(part, InlineThinkingItem):
            flush_content()
            out += _reasoning_item(summaries, part)
            summaries = []
            continue
        if summaries:
            out += _reasoning_item(summaries, None)
            summaries = []
        if isinstance(part, TextItem):
            kind = "output_text" if turn.role == "assistant" else "input_text"
            content.append({"type": kind, "text": part.text})
        elif isinstance(part, InlineDataItem):
            content.append({"type": "input_image", "image_url": image_data_url(part)})
        else:
            flush_content()
            if isinstance(part, ToolCallItem):
                out.append({"type": "function_call", "call_id": part.tool_call_id,
                            "name": part.name, "arguments": arguments_text(part)})
            elif isinstance(part, ToolResultPart):
                out.append({"type": "function_call_output", "call_id": part.tool_call_id,
                            "output": part.text})
    if summaries:
        out += _reasoning_item(summaries, None)
    flush_content()
    return out


def _reasoning_item(summaries: list[ThinkingItem],
                    opaque: InlineThinkingItem | None) -> list[JSONDict]:
    item_id = (opaque.fidelity or {}).get("id") if opaque is not None else None
    for summary in summaries:
        item_id = item_id or (summary.provider or {}).get("item_id")
    if not item_id:
        return []  # reasoning of another provider: the API cannot take it back
    item: JSONDict = {"type": "reasoning", "id": item_id,
                      "summary": [{"type": "summary_text", "text": s.thinking}
                                  for s in summaries if s.thinking]}
    if opaque is not None and opaque.data:
        item["encrypted_content"] = opaque.data.decode("utf-8", "replace")
    return [item]


REQUEST = RequestSide(
    conversation="input", name="openai-responses", build=build, parse=parse, path="/responses",
    client_path="/v1/responses", credential="authorization", bearer=True,
    error_body=error_body, reply=message_body,
    takes=frozenset({"max_tokens", "temperature", "top_p", "tools", "tool_choice",
                     "parallel_tool_calls", "thinking", "response_format", "user", "metadata"}),
    models_path=openai_models.MODELS_PATH, read_models=openai_models.read_models,
    client_models_path="/v1/models", models_body=openai_models.models_body)
"""The request side of OpenAI Responses (see :mod:`streamflow.wire.dialects.request_base`)."""
