"""Gemini ``generateContent`` request side: the builder (Gemini is an upstream only).

``contents`` alternate ``user`` and ``model`` turns. Thinking text goes back as a
``thought: true`` part and every signature as the ``thoughtSignature`` of the part
it arrived on (``fidelity["thought_signature"]``, or a generic ``signature``) --
text, thought or ``functionCall`` -- which Gemini 3 requires on follow-up turns.
A tool result is a ``functionResponse`` part named after its call (the name is
found from the call's id), its text wrapped as ``{"result": ...}`` (``{"error":
...}`` for an error result). ``systemInstruction``, ``tools``
(``functionDeclarations`` with ``parametersJsonSchema``), ``toolConfig``
(``AUTO``/``ANY``/``NONE``, ``allowedFunctionNames``) and ``generationConfig``
(``maxOutputTokens``, ``temperature``, ``topP``, ``stopSequences``,
``thinkingConfig``, and the neutral options ``responseMimeType``/``responseJsonSchema``,
``seed``, ``topK``, ``frequencyPenalty``, ``presencePenalty``) carry the rest. The
key travels as ``x-goog-api-key``; errors are Google's ``{"error": {"code",
"message", "status"}}``.
"""

from __future__ import annotations

import base64

from ....core.events import (
    InlineDataItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ....core.requests import ChatRequest, Part, ToolResultPart, budget_of
from .._request_values import arguments_object
from ..request_base import ErrorInfo, RequestSide
from . import _models

__all__ = ["REQUEST", "build", "error_body"]

_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
             404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
             504: "DEADLINE_EXCEEDED"}
_GENERATION = {"seed": "seed", "top_k": "topK", "frequency_penalty": "frequencyPenalty",
               "presence_penalty": "presencePenalty"}


def build(request: ChatRequest) -> JSONDict:
    """A Gemini ``streamGenerateContent`` body for ``request`` (the model is in the URL)."""
    names = request.tool_names()
    synthetic = {p.tool_call_id for t in request.turns for p in t.parts
                 if isinstance(p, ToolCallItem) and (p.provider or {}).get("synthetic_id")}
    contents: list[JSONDict] = []
    for turn in request.turns:
        role = "model" if turn.role == "assistant" else "user"
        parts = [p for p in (_part(p, names, synthetic) for p in turn.parts) if p is not None]
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"] += parts
        else:
            contents.append({"role": role, "parts": parts})
    body: JSONDict = {"contents": contents}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
            for t in request.tools]}]
    choice = request.tool_choice
    if choice is not None:
        mode = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}[choice.mode]
        config: JSONDict = {"mode": mode}
        if choice.mode == "tool" and choice.name:
            config["allowedFunctionNames"] = [choice.name]
        body["toolConfig"] = {"functionCallingConfig": config}
    generation: JSONDict = {}
    for key, value in (("maxOutputTokens", request.max_tokens),
                       ("temperature", request.temperature), ("topP", request.top_p)):
        if value is not None:
            generation[key] = value
    if request.stop:
        generation["stopSequences"] = list(request.stop)
    if request.thinking is not None:
        generation["thinkingConfig"] = {"thinkingBudget": budget_of(request.thinking),
                                        "includeThoughts": True}
    fmt = request.options.get("response_format")
    if fmt is not None:
        generation["responseMimeType"] = "text/plain" if fmt["type"] == "text" \
            else "application/json"
        if fmt["type"] == "json_schema":
            generation["responseJsonSchema"] = fmt["schema"]
    generation.update((key, request.options[option]) for option, key in _GENERATION.items()
                      if option in request.options)
    if generation:
        body["generationConfig"] = generation
    return body


def _signature(part: Part) -> str | None:
    fidelity = getattr(part, "fidelity", None) or {}
    value = fidelity.get("thought_signature") or fidelity.get("signature")
    return value if isinstance(value, str) and value else None


def _part(part: Part, names: dict[str, str], synthetic: set[str]) -> JSONDict | None:
    out: JSONDict | None = None
    if isinstance(part, TextItem):
        out = {"text": part.text}
    elif isinstance(part, ThinkingItem):
        out = {"text": part.thinking, "thought": True}
    elif isinstance(part, ToolCallItem):
        arguments = part.arguments if isinstance(part.arguments, dict) \
            else arguments_object(part.arguments, "tool call")
        call: JSONDict = {"name": part.name, "args": arguments}
        if part.tool_call_id and part.tool_call_id not in synthetic:
            call["id"] = part.tool_call_id
        out = {"functionCall": call}
    elif isinstance(part, ToolResultPart):
        key = "error" if part.is_error else "result"
        response: JSONDict = {"name": part.name or names.get(part.tool_call_id, ""),
                              "response": {key: part.text}}
        if part.tool_call_id and part.tool_call_id not in synthetic:
            response["id"] = part.tool_call_id
        out = {"functionResponse": response}
    elif isinstance(part, InlineDataItem):
        url = (part.provider or {}).get("url")
        out = {"fileData": {"mimeType": part.mime_type, "fileUri": url}} if url else \
            {"inlineData": {"mimeType": part.mime_type,
                            "data": base64.b64encode(part.data).decode("ascii")}}
    if out is None:
        return None
    signature = _signature(part)
    if signature:
        out["thoughtSignature"] = signature
    if not signature and out.get("text") == "":
        return None
    return out


def error_body(info: ErrorInfo) -> JSONDict:
    """Google's ``{"error": {"code", "message", "status"}}``."""
    return {"error": {"code": info.status, "message": info.message,
                      "status": info.type if info.type and info.type.isupper()
                      else _STATUSES.get(info.status, "UNKNOWN")}}


REQUEST = RequestSide(
    conversation="contents", name="gemini", build=build,
    path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
    credential="x-goog-api-key", bearer=False, credential_param="key", error_body=error_body,
    takes=frozenset({"max_tokens", "temperature", "top_p", "stop", "tools", "tool_choice",
                     "thinking", "response_format", "seed", "top_k", "frequency_penalty",
                     "presence_penalty"}),
    models_path=_models.MODELS_PATH, read_models=_models.read_models)
"""The request side of Gemini (an upstream only: no parser, no client route)."""
