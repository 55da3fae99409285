"""A chat UI's history in: the AI SDK's ``UIMessage[]`` and AG-UI's ``RunAgentInput``.

:func:`from_ui_messages` reads what ``useChat`` posts into the neutral conversation
(a list of :class:`~streamflow.core.requests.Turn`), or, with ``dialect=``, into
that provider's own ``messages`` / ``input`` / ``contents`` JSON (through the
dialect's request builder). It follows the AI SDK's ``convertToModelMessages``:

* a ``user`` message -> a user turn (``text``; ``file`` -> an image/file part: a
  ``data:`` URL is decoded, another URL kept as ``provider={"url"}``);
* an ``assistant`` message -> one assistant turn per step (``step-start`` splits
  them), each followed by a user turn of the step's tool results: ``tool-<name>``
  and ``dynamic-tool`` parts past ``input-streaming`` are tool calls, those in
  ``output-available`` / ``output-error`` also results (``is_error`` for errors);
* ``reasoning`` -> a thinking item with its signature: streamflow's own metadata
  (``providerMetadata.streamflow.fidelity`` / ``.data`` for redacted blocks, as the
  vercel-ui encoder writes it), or the AI SDK providers' (``anthropic.signature`` /
  ``redactedData``, ``openai.reasoningEncryptedContent``, ``google.thoughtSignature``);
* ``data-*`` parts are left out unless ``map_data(part)`` returns parts for them;
  ``source-*`` parts are left out (as the AI SDK does); ``system`` messages are left
  out: the system prompt is the app's (``ChatRequest.system``).

A tool part a person answered (``approval-requested`` / ``approval-responded``, AI SDK 6
and later) holds a call with no result yet, which a provider refuses in a conversation
that goes on, so :func:`from_ui_messages` leaves it out; :func:`waiting_step` reads a
history whose last step ends in such answers (what ``agent_answer`` resumes).

AG-UI's ``RunAgentInput`` is read in ``web._history_agui``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...core._tools import denial
from ...core.errors import RequestError
from ...core.events import (
    InlineDataItem,
    InlineThinkingItem,
    JSONDict,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ...core.requests import ChatRequest, Part, ToolResultPart, Turn
from ...wire.dialects import get_request

DataMapper = Callable[[JSONDict], "Iterable[Part] | None"]
"""Maps a ``data-*`` part to the parts it stands for in the model's input (None: none)."""

_TOOL_STATES_CALLED = ("input-available", "output-available", "output-error", "output-denied")


def _bad(message: str) -> RequestError:
    return RequestError(f"chat history: {message}")


def _meta(part: Mapping[str, Any], key: str = "providerMetadata") -> dict[str, Any]:
    meta = part.get(key)
    return meta if isinstance(meta, dict) else {}


def _sub(meta: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = meta.get(key)
    return value if isinstance(value, dict) else {}


def _fidelity(meta: dict[str, Any]) -> JSONDict | None:
    """The item fidelity in ``meta``: streamflow's own, else the AI SDK providers' signatures."""
    own = meta.get("streamflow")
    if isinstance(own, dict) and isinstance(own.get("fidelity"), dict):
        return dict(own["fidelity"])
    for provider, key, ours in (("anthropic", "signature", "signature"),
                                ("google", "thoughtSignature", "thought_signature"),
                                ("vertex", "thoughtSignature", "thought_signature")):
        value = meta.get(provider, {}).get(key) if isinstance(meta.get(provider), dict) else None
        if isinstance(value, str) and value:
            return {ours: value}
    return None


def _provider(meta: dict[str, Any]) -> JSONDict | None:
    own = meta.get("streamflow")
    if isinstance(own, dict) and isinstance(own.get("provider"), dict):
        return dict(own["provider"])
    return None


def _b64(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad("invalid base64 data") from exc


def _reasoning(part: Mapping[str, Any]) -> Part | None:
    meta = _meta(part)
    own = _sub(meta, "streamflow")
    text = str(part.get("text") or "")
    if isinstance(own.get("data"), str):  # a redacted block, as streamflow wrote it
        return InlineThinkingItem("inline_thinking.done", _b64(own["data"]), _fidelity(meta),
                                  _provider(meta))
    anthropic = _sub(meta, "anthropic")
    if isinstance(anthropic.get("redactedData"), str):
        return InlineThinkingItem("inline_thinking.done",
                                  anthropic["redactedData"].encode(), None, None)
    openai = _sub(meta, "openai")
    if isinstance(openai.get("reasoningEncryptedContent"), str) and not text:
        fid = {"id": openai["itemId"]} if isinstance(openai.get("itemId"), str) else None
        return InlineThinkingItem("inline_thinking.done",
                                  openai["reasoningEncryptedContent"].encode(), fid, None)
    return ThinkingItem("thinking.done", text, _fidelity(meta), _provider(meta))


def _file(part: Mapping[str, Any]) -> Part:
    url = part.get("url")
    if not isinstance(url, str) or not url:
        raise _bad("a file part has no url")
    mime = str(part.get("mediaType") or "")
    provider: JSONDict = {"filename": part["filename"]} if part.get("filename") else {}
    if url.startswith("data:"):
        head, _, data = url.partition(",")
        mime = mime or head[5:].split(";")[0]
        raw = _b64(data) if head.endswith(";base64") else data.encode()
        return InlineDataItem("inline_data.done", raw, mime, _fidelity(_meta(part)),
                              provider or None)
    return InlineDataItem("inline_data.done", b"", mime, None, {**provider, "url": url})


def _tool_name(part: Mapping[str, Any]) -> str:
    kind = str(part["type"])
    return str(part.get("toolName") or "") if kind == "dynamic-tool" else kind[5:]


def _is_tool(kind: str) -> bool:
    return kind == "dynamic-tool" or kind.startswith("tool-")


def _output_text(output: Any) -> str | list[TextItem | InlineDataItem]:
    if isinstance(output, str):
        return output
    return json.dumps(output, separators=(",", ":"), ensure_ascii=False)


def _tool(part: Mapping[str, Any]) -> tuple[ToolCallItem, ToolResultPart | None]:
    call_id = str(part.get("toolCallId") or "")
    if not call_id:
        raise _bad("a tool part has no toolCallId")
    state = part.get("state")
    args = part.get("input")
    if args is None:
        args = part.get("rawInput", {})
    arguments: str | JSONDict = args if isinstance(args, (dict, str)) else json.dumps(args)
    meta = _meta(part, "callProviderMetadata")
    call = ToolCallItem("tool_call.done", _tool_name(part), call_id, arguments,
                        _fidelity(meta), _provider(meta))
    if state == "output-available":
        return call, ToolResultPart(call_id, _output_text(part.get("output")), False, call.name)
    if state == "output-error":
        return call, ToolResultPart(call_id, str(part.get("errorText") or ""), True, call.name)
    if state == "output-denied":  # a person said no: the model hears why, as a tool error
        approval = part.get("approval")
        reason = approval.get("reason") if isinstance(approval, Mapping) else None
        return call, denial(call, str(reason) if reason else None).to_part()
    return call, None


def _user_turn(message: Mapping[str, Any], map_data: DataMapper | None) -> Turn:
    parts: list[Part] = []
    for part in _parts(message):
        kind = part["type"]
        if kind == "text":
            parts.append(TextItem("text.done", str(part.get("text") or ""),
                                  _fidelity(_meta(part)), None))
        elif kind == "file":
            parts.append(_file(part))
        elif kind.startswith("data-") and map_data is not None:
            parts.extend(map_data(dict(part)) or ())
    return Turn("user", parts)


def _assistant_turns(message: Mapping[str, Any], map_data: DataMapper | None,
                     called: tuple[str, ...] = _TOOL_STATES_CALLED) -> list[Turn]:
    """One assistant turn per step, each followed by a user turn of its results; a tool
    part is a call when its state is one of ``called``."""
    turns: list[Turn] = []
    content: list[Part] = []
    results: list[Part] = []

    def flush() -> None:
        if content:
            turns.append(Turn("assistant", list(content)))
        if results:
            turns.append(Turn("user", list(results)))
        content.clear()
        results.clear()

    for part in _parts(message):
        kind = part["type"]
        if kind == "step-start":
            flush()
        elif kind == "text":
            if part.get("text"):
                content.append(TextItem("text.done", str(part["text"]), _fidelity(_meta(part)),
                                        _provider(_meta(part))))
        elif kind == "reasoning":
            item = _reasoning(part)
            if item is not None:
                content.append(item)
        elif kind == "file":
            content.append(_file(part))
        elif _is_tool(kind):
            if part.get("state") in called:
                call, result = _tool(part)
                content.append(call)
                if result is not None:
                    results.append(result)
        elif kind.startswith("data-") and map_data is not None:
            content.extend(map_data(dict(part)) or ())
    flush()
    return turns


def _parts(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = message.get("parts")
    if parts is None and isinstance(message.get("content"), str):  # a pre-v5 message
        return [{"type": "text", "text": message["content"]}]
    if not isinstance(parts, list) or not all(isinstance(p, dict) and isinstance(
            p.get("type"), str) for p in parts):
        raise _bad("a message's parts must be a list of objects with a type")
    return parts


def to_dialect(turns: Sequence[Turn], dialect: str) -> list[JSONDict]:
    """``turns`` as ``dialect``'s own conversation JSON (its builder's messages/input/contents)."""
    side = get_request(dialect)  # ValueError for a dialect with no request side
    out: list[JSONDict] = side.build(ChatRequest(model="", turns=list(turns)))[side.conversation]
    return out


def from_ui_messages(messages: Sequence[Mapping[str, Any]], *, dialect: str | None = None,
                     map_data: DataMapper | None = None) -> Any:
    """The AI SDK ``UIMessage[]`` as a list of Turn, or ``dialect``'s conversation JSON.

    See the module doc for the mapping. Raises
    :class:`~streamflow.core.errors.RequestError` for a malformed history.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise _bad("messages must be a list of UI messages")
    turns: list[Turn] = []
    for message in messages:
        if not isinstance(message, Mapping):
            raise _bad("each message must be an object")
        role = message.get("role")
        if role == "user":
            turn = _user_turn(message, map_data)
            if turn.parts:
                turns.append(turn)
        elif role == "assistant":
            turns.extend(_assistant_turns(message, map_data))
        elif role != "system":
            raise _bad(f"unknown message role {role!r}")
    return turns if dialect is None else to_dialect(turns, dialect)


_ANSWERED = "approval-responded"
_ASKED = "approval-requested"


def waiting_step(messages: Sequence[Mapping[str, Any]]
                 ) -> tuple[list[Turn], list[ToolCallItem], list[ToolResultPart]] | None:
    """When ``messages`` end with the assistant's step whose tool calls a person answered
    (``approval-responded`` parts): the conversation up to and including that step's
    calls, the calls answered, and the step's results already in (its other calls).
    ``None`` for any other history. An asked call still without an answer is a
    :class:`~streamflow.core.errors.RequestError` (nothing can run until it has one)."""
    if not messages or not isinstance(messages[-1], Mapping) or \
            messages[-1].get("role") != "assistant":
        return None
    parts = _parts(messages[-1])
    starts = [i for i, p in enumerate(parts) if p["type"] == "step-start"]
    step = parts[starts[-1] if starts else 0:]
    tools = [p for p in step if _is_tool(str(p["type"]))]
    if not any(p.get("state") == _ANSWERED for p in tools):
        return None
    asked = [str(p.get("toolCallId")) for p in tools if p.get("state") == _ASKED]
    if asked:
        raise _bad(f"the tool call {asked[0]!r} waits for a person's answer")
    earlier = dict(messages[-1], parts=parts[:starts[-1]] if starts else [])
    turns: list[Turn] = from_ui_messages([*messages[:-1], earlier])
    answered = {str(p.get("toolCallId")) for p in tools if p.get("state") == _ANSWERED}
    calls, *results = _assistant_turns({"parts": step}, None, (*_TOOL_STATES_CALLED, _ANSWERED))
    waiting = [c for c in calls.parts
               if isinstance(c, ToolCallItem) and c.tool_call_id in answered]
    done = [r for turn in results for r in turn.parts if isinstance(r, ToolResultPart)]
    turns.append(calls)
    return turns, waiting, done
