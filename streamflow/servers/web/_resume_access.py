"""Who may start and resume a chat in :mod:`streamflow.servers.web.resume`, and how a refusal looks.

* **Chat ids** are ``[A-Za-z0-9_-]{1,128}`` (:data:`CHAT_ID`), checked before one
  becomes part of a Redis key; anything else is refused with HTTP 400.
* **Resume tokens**: the request that starts a chat's first answer gets a random
  token (``secrets.token_urlsafe(32)``: 256 bits) in the ``x-resume-token`` response
  header. Redis keeps only its SHA-256, beside the chat's stream pointer. Resuming the
  chat, or starting a new answer in it, needs the token again -- the
  ``x-resume-token`` request header, or the ``resume_token`` query parameter for
  clients that cannot set headers (a browser ``EventSource``) -- compared in constant
  time; without it the answer is 403.
* **Live streams** are counted per app (``max_live``) and per client key
  (``max_live_per_client``); one more is refused with HTTP 429.
* **Keys** (:class:`ChatKeys`): a chat's pointer ``<prefix>chat:<chat id>``, its token hash
  ``<prefix>token:<chat id>`` and its streams ``<prefix>stream:<chat id>:<uuid>`` (each with
  ``:message`` beside it, and a stop key ``<prefix>stop:<stream key>``). On a Redis
  Cluster the chat id is the keys' hash tag -- ``<prefix>chat:{<chat id>}`` and so on --
  so every key of one chat is in one slot: the claim script and the pipelines that name
  two of them never meet ``CROSSSLOT``, and the chats spread over the nodes.

A refusal is answered in the shape the protocol's client reads (:func:`refusal`):
``uni`` -- ``{"error": {"type", "message"}}`` JSON, which streamflow's ``from_httpx``
raises as ``HTTPStatusError``; ``vercel-ui`` -- the message as text, which the AI
SDK's transport throws as the ``Error``'s message; ``ag-ui`` -- a ``RUN_ERROR``
JSON object, which ``HttpAgent`` attaches to its error as ``payload``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from ...core.errors import LimitExceededError, StreamflowError
from ...wire.redaction import REDACTED, redacting_logger

if TYPE_CHECKING:
    from ...reactive._redis.link import RedisLink


log = redacting_logger("streamflow.servers.web.resume")  # no credential in a line

CHAT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
TOKEN_HEADER = "x-resume-token"
TOKEN_QUERY = "resume_token"
MAX_TOKEN = 256  # characters of a presented token that are worth hashing
RESUME_TARGETS = ("uni", "vercel-ui", "ag-ui")


class ResumeRefused(StreamflowError):
    """A chat request refused before any stream: ``status`` (400/403) and a ``code``."""

    def __init__(self, message: str, *, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(status=self.status, code=self.code)
        return out


@dataclass(frozen=True, slots=True, repr=False)
class Started:
    """A started answer: its ``chat_id``, Redis stream ``key`` and the chat's resume ``token``
    (``None`` when the streams run with ``tokens=False``; its repr says only whether one is
    set: ``token='<redacted>'``)."""

    chat_id: str
    key: str
    token: str | None

    def __repr__(self) -> str:
        token = None if self.token is None else REDACTED
        return f"Started(chat_id={self.chat_id!r}, key={self.key!r}, token={token!r})"


@dataclass(frozen=True, slots=True)
class ChatKeys:
    """The Redis keys of a chat (see the module doc): hash-tagged by chat id on a cluster."""

    prefix: str
    cluster: bool = False

    def __post_init__(self) -> None:
        if self.cluster and ("{" in self.prefix or "}" in self.prefix):
            raise ValueError("on a Redis Cluster the key prefix may not hold { or }: the chat "
                             "id is the keys' hash tag")

    def tag(self, chat_id: str) -> str:
        """What names ``chat_id`` in its keys: ``{chat_id}`` (its hash tag) on a cluster."""
        return f"{{{chat_id}}}" if self.cluster else chat_id

    def pointer(self, chat_id: str) -> str:
        """The key naming the chat's latest stream."""
        return f"{self.prefix}chat:{self.tag(chat_id)}"

    def token(self, chat_id: str) -> str:
        """The key holding the SHA-256 of the chat's resume token."""
        return f"{self.prefix}token:{self.tag(chat_id)}"

    def stream(self, chat_id: str, name: str) -> str:
        """The key of one of the chat's streams (``name``: a fresh uuid)."""
        return f"{self.prefix}stream:{self.tag(chat_id)}:{name}"


def forbidden(message: str = "this chat needs its resume token") -> ResumeRefused:
    """The 403 refusal."""
    return ResumeRefused(message, status=403, code="forbidden")


def check_chat_id(chat_id: Any) -> str:
    """``chat_id`` if it matches :data:`CHAT_ID`, else :class:`ResumeRefused` (400)."""
    if isinstance(chat_id, str) and CHAT_ID.fullmatch(chat_id):
        return chat_id
    raise ResumeRefused("invalid chat id: use 1 to 128 of A-Z a-z 0-9 _ -", status=400,
                        code="invalid_chat_id")


def new_token() -> str:
    """A fresh resume token: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What Redis keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_matches(stored: str | None, token: str | None) -> bool:
    """Whether ``token`` hashes to ``stored``, compared in constant time."""
    if not stored or not token or len(token) > MAX_TOKEN:
        return False
    return hmac.compare_digest(stored.encode(), hash_token(token).encode())


def presented_token(request: Request | None) -> str | None:
    """The token a request carries: the ``x-resume-token`` header, else ``?resume_token=``."""
    if request is None:
        return None
    return request.headers.get(TOKEN_HEADER) or request.query_params.get(TOKEN_QUERY) or None


# Point the chat at its new stream and keep (or claim) its token hash, in one step,
# unless the chat holds another token (claimed since the caller's constant-time check):
# then 0. Sent again by a retry, it finds its own hash and does the same again.
_CLAIM = """
local stored = redis.call('GET', KEYS[1])
if stored and stored ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
"""


async def token_to_keep(link: RedisLink, token_key: str, token: str | None) -> str:
    """The token a new answer of the chat keeps: ``token`` if the chat holds its hash, a new
    one if the chat holds none; a 403 if it holds another."""
    stored = await link.call("get", token_key)
    if stored is None:
        return new_token()
    if not token_matches(stored, token):
        raise forbidden()
    assert token is not None
    return token


async def point(link: RedisLink, pointer: str, key: str, life: int, token_key: str,
                token: str | None) -> None:
    """Make ``key`` the chat's latest stream for ``life`` seconds, with ``token`` (if any)
    as the chat's token; a 403 if another request claimed the chat meanwhile."""
    if token is None:
        await link.call("set", pointer, key, ex=life)
    elif not await link.call("eval", _CLAIM, 2, token_key, pointer, hash_token(token), key,
                             life):
        raise forbidden()


def peer_address(request: Request) -> str | None:
    """The default client key: the connecting address (a proxy's, behind one)."""
    return request.client.host if request.client else None


@dataclass
class LiveStreams:
    """Counts the producers running, in all and per client key; refuses one too many."""

    max_live: int | None
    max_per_client: int | None
    total: int = 0
    by_client: dict[str, int] = field(default_factory=dict)

    def reserve(self, client: str | None) -> Slot:
        """Count one more, or :class:`LimitExceededError` (``max_live``/``max_live_per_client``)."""
        if self.max_live is not None and self.total >= self.max_live:
            raise LimitExceededError("max_live", self.max_live)
        if client is not None and self.max_per_client is not None \
                and self.by_client.get(client, 0) >= self.max_per_client:
            raise LimitExceededError("max_live_per_client", self.max_per_client)
        self.total += 1
        if client is not None:
            self.by_client[client] = self.by_client.get(client, 0) + 1
        return Slot(self, client)


class Slot:
    """One counted live stream; :meth:`release` (idempotent) uncounts it."""

    def __init__(self, live: LiveStreams, client: str | None) -> None:
        self.live = live
        self.client = client
        self.held = True

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        self.live.total -= 1
        if self.client is not None:
            left = self.live.by_client.get(self.client, 1) - 1
            if left > 0:
                self.live.by_client[self.client] = left
            else:
                self.live.by_client.pop(self.client, None)


def refusal(error: StreamflowError, target: str) -> Response:
    """``error`` (raised before any stream) as the HTTP answer target ``target`` reads.

    :class:`ResumeRefused` keeps its status; a live-stream limit is 429; anything else
    (Redis unreachable after its retry...) is 503 with a generic message -- the
    details, which may name the Redis host, go to the log only.
    """
    if isinstance(error, ResumeRefused):
        status, code, message = error.status, error.code, error.message
    elif isinstance(error, LimitExceededError):
        status, code = 429, "too_many_live_streams"
        message = f"too many live streams ({error.limit}={error.maximum}); try again later"
    else:
        log.warning("resume: the stream store failed: %s", error)
        status, code = 503, "stream_store_unavailable"
        message = "the stream store is unavailable; try again"
    if target == "vercel-ui":
        return PlainTextResponse(message, status_code=status)
    if target == "ag-ui":
        return JSONResponse({"type": "RUN_ERROR", "message": message, "code": code},
                            status_code=status)
    return JSONResponse({"error": {"type": code, "message": message}}, status_code=status)
