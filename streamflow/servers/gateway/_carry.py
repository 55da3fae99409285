"""Carry an upstream's replay state through a client of another dialect, and back (sans-IO).

What a provider needs back on the next turn (``fidelity``: signatures, encrypted
reasoning with its item id, a Gemini function call's thought signature) must
survive a round trip through the client's dialect, which may have no field for it.
Every dialect has a field for an opaque string, so :class:`Carrier` packs what the
client cannot hold natively into one (``sf1_`` + a MAC + URL-safe base64 of the
JSON), signed so a client cannot forge what its own dialect cannot express:

* a thinking item whose fidelity is more than one signature (OpenRouter's
  ``reasoning_details``...) -> ``fidelity={"signature": <token>}``; a bare
  signature (Anthropic, Bedrock, Gemini) goes as it is; an OpenAI Responses
  summary (no signature, an item id) is signed with a token of its item id, so no
  thinking block ever reaches a client unsigned or signed ``""``;
* an encrypted/redacted reasoning item with fidelity (an OpenAI Responses reasoning
  id, an OpenRouter entry) -> its ``data`` becomes the token;
* a tool call with fidelity (or an id Gemini did not send) -> its id becomes
  ``<id>__sf1_<token>``.

The client sends these back verbatim (that is what it does with signatures, opaque
reasoning and call ids); :func:`restore` unpacks them in the parsed request, so the
upstream gets byte for byte what it sent. Nothing is packed when client and
upstream speak the same dialect.

Tokens are authenticated with HMAC-SHA256 (truncated to 128 bits) under the
gateway's carry key (``create_app(carry_key=...)``, ``streamflow gateway
--carry-key-env NAME``). Without one a random key is made per process (a warning
is logged): tokens then do not survive a restart nor span instances. A token
with the prefix whose MAC does not match (forged, truncated, another key's) is a
:class:`~streamflow.core.errors.RequestError`, which the gateway answers with a 400.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import replace
from typing import Any

from ...core.errors import RequestError
from ...core.events import (
    ContentItem,
    InlineThinkingItem,
    JSONDict,
    ThinkingItem,
    ToolCallItem,
    UniEvent,
)
from ...core.requests import ChatRequest, ToolResultPart
from ...wire.redaction import redacting_logger

PREFIX = "sf1_"
ID_MARK = "__" + PREFIX
_BARE = frozenset({"signature", "thought_signature"})
_MAC_CHARS = 22  # 16 bytes of HMAC-SHA256, URL-safe base64 without padding

log = redacting_logger("streamflow.servers.gateway")  # no credential in a line
_process_key: bytes | None = None


def process_key() -> bytes:
    """This process's random carry key, made (with a warning) on first use."""
    global _process_key
    if _process_key is None:
        _process_key = secrets.token_bytes(32)
        log.warning("no carry key configured: replay-state tokens are signed with a random "
                    "per-process key; they do not survive a restart or span instances "
                    "(set one with --carry-key-env / create_app(carry_key=...))")
    return _process_key


def _mac(key: bytes, body: str) -> str:
    digest = hmac.new(key, body.encode("ascii"), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def pack(value: Any, key: bytes | None = None) -> str:
    """``value`` (JSON) as a signed opaque token of ``[A-Za-z0-9_-]``."""
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    body = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    return PREFIX + _mac(key or process_key(), body) + body


def unpack(token: str, key: bytes | None = None) -> Any:
    """The value of a :func:`pack` token, or ``None`` when ``token`` is not one.

    A token with the prefix that is not authentic under ``key`` raises
    ``RequestError`` (see the module doc).
    """
    if not token.startswith(PREFIX):
        return None
    mac, body = token[len(PREFIX):len(PREFIX) + _MAC_CHARS], token[len(PREFIX) + _MAC_CHARS:]
    if not token.isascii() or not hmac.compare_digest(mac, _mac(key or process_key(), body)):
        raise RequestError("a replay-state token the gateway did not sign (forged, "
                            "truncated or from another gateway key): send back what it sent")
    try:
        return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError):  # signed by us, so never: refuse all the same
        raise RequestError("a replay-state token that does not decode") from None


def _bare(fidelity: JSONDict) -> bool:
    return len(fidelity) == 1 and next(iter(fidelity)) in _BARE \
        and isinstance(next(iter(fidelity.values())), str)


class Carrier:
    """Rewrites the events of one upstream stream for a client of another dialect."""

    __slots__ = ("active", "key", "wrap_bare", "_call_id")

    def __init__(self, client: str, upstream: str, key: bytes | None = None) -> None:
        self.active = client != upstream
        self.key = (key or process_key()) if self.active else b""
        # A Responses client gets a signature back as a reasoning item's
        # encrypted_content: packed, it is known for a signature on the way back.
        self.wrap_bare = client == "openai-responses"
        self._call_id = ""

    def event(self, event: UniEvent) -> UniEvent:
        """``event`` with its item's fidelity packed where the client has no place for it."""
        if not self.active or not event.content_items:
            return event
        item = event.content_items[0]
        new = self.item(item)
        return event if new is item else replace(event, content_items=[new])

    def item(self, item: ContentItem) -> ContentItem:
        """One item, packed (see the module doc)."""
        fidelity = item.fidelity
        if isinstance(item, ToolCallItem):
            return self._call(item)
        if isinstance(item, ThinkingItem):
            if fidelity and (self.wrap_bare or not _bare(fidelity)):
                return replace(item, fidelity={"signature": pack({"f": fidelity}, self.key)})
            item_id = (item.provider or {}).get("item_id")
            if not fidelity and item_id:  # a Responses summary: signed with its item id
                token = pack({"p": {"item_id": item_id}}, self.key)
                return replace(item, fidelity={"signature": token})
            return item
        if not fidelity:
            return item
        if isinstance(item, InlineThinkingItem):
            token = pack({"f": fidelity, "d": item.data.decode("utf-8", "replace")}, self.key)
            return replace(item, data=token.encode(), fidelity=None)
        return item

    def _call(self, item: ToolCallItem) -> ToolCallItem:
        done = item.type == "tool_call.done"
        if item.tool_call_id and not done:
            self._call_id = _packed_id(item, self.key)
            return replace(item, tool_call_id=self._call_id, fidelity=None)
        if done:  # the id the client saw on the first fragment (fidelity known by then)
            call_id, self._call_id = self._call_id or _packed_id(item, self.key), ""
            return replace(item, tool_call_id=call_id, fidelity=None)
        return replace(item, fidelity=None) if item.fidelity else item


def _packed_id(item: ToolCallItem, key: bytes) -> str:
    """``<id>__sf1_<token>`` when the call has fidelity or a made-up id, else the id."""
    state: JSONDict = {}
    if item.fidelity:
        state["f"] = item.fidelity
    if (item.provider or {}).get("synthetic_id"):
        state["s"] = True
    if not state:
        return item.tool_call_id
    return item.tool_call_id + ID_MARK + pack(state, key)[len(PREFIX):]


def _call_id(value: str, key: bytes | None) -> tuple[str, JSONDict | None]:
    """``(id, state)`` of a packed call id (``state`` is ``None`` for a plain id)."""
    base, mark, token = value.partition(ID_MARK)
    if not mark:
        return value, None
    state = unpack(PREFIX + token, key)
    return (base, state) if isinstance(state, dict) else (value, None)


_MOVED = ThinkingItem("thinking.done")


def _signed(parts: list[Any], n: int, value: JSONDict) -> Any:
    """Give the thinking item just before an opaque part its unpacked signature.

    Returns what takes the opaque part's place: nothing (``_MOVED``) when a thinking
    item precedes it, else a thinking item of its own.
    """
    fidelity, extra = value.get("f"), value.get("p") or {}
    if n and isinstance(parts[n - 1], ThinkingItem):
        last = parts[n - 1]
        parts[n - 1] = replace(last, fidelity=fidelity,
                               provider={**(last.provider or {}), **extra} or None)
        return _MOVED
    return ThinkingItem("thinking.done", "", fidelity, extra or None)


def restore(request: ChatRequest, key: bytes | None = None) -> ChatRequest:
    """Unpack the tokens :class:`Carrier` wrote, in the parts of a parsed request (in place).

    A token not signed with ``key`` raises ``RequestError`` (see the module doc).
    """
    for turn in request.turns:
        for n, part in enumerate(turn.parts):
            if isinstance(part, ToolCallItem):
                call_id, state = _call_id(part.tool_call_id, key)
                if state is not None:
                    provider = {**(part.provider or {}), "synthetic_id": True} \
                        if state.get("s") else part.provider
                    turn.parts[n] = replace(part, tool_call_id=call_id,
                                            fidelity=state.get("f"), provider=provider)
            elif isinstance(part, ToolResultPart):
                part.tool_call_id = _call_id(part.tool_call_id, key)[0]
            elif isinstance(part, ThinkingItem):
                value = unpack(str((part.fidelity or {}).get("signature") or ""), key)
                if isinstance(value, dict):
                    provider = {**(part.provider or {}), **(value.get("p") or {})} or None
                    turn.parts[n] = replace(part, fidelity=value.get("f"), provider=provider)
            elif isinstance(part, InlineThinkingItem):
                value = unpack(part.data.decode("utf-8", "replace"), key)
                if isinstance(value, dict) and "d" in value:
                    turn.parts[n] = replace(part, data=str(value["d"]).encode(),
                                            fidelity=value.get("f"))
                elif isinstance(value, dict):  # a thinking signature, held as opaque data
                    turn.parts[n] = _signed(turn.parts, n, value)
        turn.parts = [p for p in turn.parts if p is not _MOVED]
    return request
