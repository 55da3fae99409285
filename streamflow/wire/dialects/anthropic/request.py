"""Anthropic Messages request side (``POST /v1/messages``): parser and builder.

Parsed: ``system`` (string or text blocks), ``messages`` with ``text``, ``image``,
``tool_use``, ``tool_result`` (``is_error``, text/image content), ``thinking`` (with
``signature``) and ``redacted_thinking`` blocks; ``tools`` (function tools; server
tools stay in ``extra["server_tools"]``), ``tool_choice`` (``auto``/``any``/``tool``/
``none``, ``disable_parallel_tool_use``), ``max_tokens``, ``temperature``, ``top_p``,
``stop_sequences``, ``stream``, ``thinking`` (``budget_tokens``), and the neutral
options ``top_k``, ``user`` (``metadata.user_id``) and ``response_format`` (structured
output: ``output_config.format``, ``{"type": "json_schema", "schema"}``; a JSON-object
format without a schema is written as the schema ``{"type": "object"}``). Other
top-level fields go to ``extra``.

Built: the same, with what the API refuses left out -- a thinking block without a
signature (reasoning of another provider cannot be verified), empty text -- and
consecutive turns of one role merged (the API wants them alternating, tool results
first in their user message).
"""

from __future__ import annotations

from typing import Any

from ....core.errors import RequestError
from ....core.events import JSONDict
from ....core.requests import ChatRequest, Thinking, ToolChoice, ToolSpec, Turn, budget_of
from .._request_values import (
    need,
    obj,
    obj_list,
    opt_float,
    opt_int,
    opt_str,
    shown,
    stop_list,
    text_of,
)
from ..request_base import RequestSide
from . import _models
from ._content import block, messages, parts
from .reply import error_body, message_body

__all__ = ["API_VERSION", "DEFAULT_MAX_TOKENS", "REQUEST", "block", "build", "parse"]

API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header every request carries."""
DEFAULT_MAX_TOKENS = 4096
_KNOWN = frozenset({"model", "messages", "system", "tools", "tool_choice", "max_tokens",
                    "temperature", "top_p", "stop_sequences", "stream", "thinking", "top_k"})


# -- parsing --------------------------------------------------------------------
def parse(body: Any) -> ChatRequest:
    """An Anthropic Messages request body as a :class:`ChatRequest`."""
    body = obj(body, "request")
    request = ChatRequest(model=str(body.get("model") or ""), source="anthropic",
                          system=text_of(body.get("system"), "system") or None,
                          max_tokens=opt_int(body.get("max_tokens"), "max_tokens"),
                          temperature=opt_float(body.get("temperature"), "temperature"),
                          top_p=opt_float(body.get("top_p"), "top_p"),
                          stop=stop_list(body.get("stop_sequences")),
                          stream=bool(body.get("stream", False)), include_usage=True)
    for message in obj_list(need(body, "messages", "request"), "messages"):
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise RequestError(f"message role must be user or assistant, not {role!r}")
        request.turns.append(Turn(role, parts(message.get("content"))))
    server_tools: list[JSONDict] = []
    for tool in obj_list(body.get("tools"), "tools"):
        if "input_schema" in tool or tool.get("type") in (None, "custom"):
            request.tools.append(ToolSpec(str(need(tool, "name", "tool")),
                                          str(tool.get("description") or ""),
                                          obj(tool.get("input_schema") or {}, "input_schema")))
        else:
            server_tools.append(tool)
    if body.get("tool_choice") is not None:
        request.tool_choice = _tool_choice(obj(body["tool_choice"], "tool_choice"))
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        request.thinking = Thinking(budget=opt_int(thinking.get("budget_tokens"), "budget"))
    request.extra = {k: v for k, v in body.items() if k not in _KNOWN}
    if server_tools:
        request.extra["server_tools"] = server_tools
    _options(request, body)
    return request


def _options(request: ChatRequest, body: JSONDict) -> None:
    """Record the neutral options the body sets (``ChatRequest.asked``)."""
    if request.stop:
        request.asked["stop"] = "stop_sequences"
    if request.tool_choice is not None and request.tool_choice.parallel is False:
        request.asked["parallel_tool_calls"] = "tool_choice.disable_parallel_tool_use"
    request.ask("top_k", "top_k", opt_int(body.get("top_k"), "top_k"))
    config = request.extra.get("output_config")
    if config is not None:
        config = dict(obj(config, "output_config"))
        fmt = config.pop("format", None)
        if fmt is not None:  # structured output: the neutral response_format
            fmt = obj(fmt, "output_config.format")
            if fmt.get("type") != "json_schema":
                raise RequestError("output_config.format.type must be 'json_schema', "
                                    f"not {shown(fmt.get('type'))}")
            request.ask("response_format", "output_config.format", {
                "type": "json_schema", "name": "output",
                "schema": obj(need(fmt, "schema", "output_config.format"),
                              "output_config.format.schema")})
        if config:
            request.extra["output_config"] = config  # the rest (effort) goes back as it was
        else:
            del request.extra["output_config"]
    metadata = request.extra.get("metadata")
    if metadata is not None:
        metadata = obj(metadata, "metadata")
        if set(metadata) <= {"user_id"}:  # the only field the API has: the neutral user
            del request.extra["metadata"]
            request.ask("user", "metadata.user_id",
                        opt_str(metadata.get("user_id"), "metadata.user_id"))


def _tool_choice(choice: JSONDict) -> ToolChoice:
    kind = choice.get("type")
    parallel = None if "disable_parallel_tool_use" not in choice \
        else not choice["disable_parallel_tool_use"]
    if kind == "tool":
        return ToolChoice("tool", str(need(choice, "name", "tool_choice")), parallel)
    modes = {"auto": "auto", "any": "required", "none": "none"}
    if not isinstance(kind, str) or kind not in modes:
        raise RequestError("tool_choice.type must be 'auto', 'any', 'tool' or 'none', "
                            f"not {shown(kind)}")
    return ToolChoice(modes[kind], None, parallel)  # type: ignore[arg-type]


# -- building -------------------------------------------------------------------
def build(request: ChatRequest) -> JSONDict:
    """An Anthropic Messages request body for ``request`` (``stream`` as the request says)."""
    body: JSONDict = dict(request.extra) if request.source == "anthropic" else {}
    server_tools = body.pop("server_tools", [])
    body.update(model=request.model, messages=messages(request.turns),
                max_tokens=request.max_tokens or DEFAULT_MAX_TOKENS, stream=request.stream)
    if request.system:
        body["system"] = request.system
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
             for t in request.tools] + list(server_tools)
    if tools:
        body["tools"] = tools
    if request.tool_choice is not None:
        body["tool_choice"] = _choice_json(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if request.thinking is not None:
        budget = max(1024, budget_of(request.thinking))
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = max(body["max_tokens"], budget + 1024)
    if "top_k" in request.options:
        body["top_k"] = request.options["top_k"]
    if "user" in request.options:
        body["metadata"] = {**(body.get("metadata") or {}), "user_id": request.options["user"]}
    fmt = request.options.get("response_format")
    if fmt is not None and fmt["type"] != "text":  # structured output: output_config.format
        schema = fmt.get("schema") if fmt["type"] == "json_schema" else {"type": "object"}
        body["output_config"] = {**(body.get("output_config") or {}),
                                 "format": {"type": "json_schema", "schema": schema}}
    return body


def _choice_json(choice: ToolChoice) -> JSONDict:
    out: JSONDict = {"type": {"auto": "auto", "none": "none", "required": "any",
                              "tool": "tool"}[choice.mode]}
    if choice.mode == "tool":
        out["name"] = choice.name
    if choice.parallel is not None and choice.mode != "none":
        out["disable_parallel_tool_use"] = not choice.parallel
    return out


REQUEST = RequestSide(
    name="anthropic", build=build, parse=parse, path="/v1/messages", client_path="/v1/messages",
    credential="x-api-key", bearer=False, headers={"anthropic-version": API_VERSION},
    error_body=error_body, reply=message_body,
    takes=frozenset({"max_tokens", "temperature", "top_p", "stop", "tools", "tool_choice",
                     "parallel_tool_calls", "thinking", "top_k", "user",
                     "response_format"}),
    models_path=_models.MODELS_PATH, read_models=_models.read_models,
    client_models_path="/v1/models", models_body=_models.models_body, prefill=True)
"""The request side of the Anthropic Messages API (see
:mod:`streamflow.wire.dialects.request_base`)."""
