"""What a dialect's ``request.py`` declares: its request side, one :class:`RequestSide` (sans-IO).

A dialect with a request side (``dialects/<name>/request.py``) reads a client's
request into the neutral :class:`~streamflow.core.requests.ChatRequest`
(``parse``), writes one (``build``), and states the facts every user of the
dialect needs: where a request goes (``path`` under the base URL, ``client_path``
where the gateway serves clients of the dialect), how the API key travels
(``credential``, and ``credential_param`` when the API also takes it in the
query), the fixed headers, the error envelope, the non-streaming answer
(``reply``), which neutral options its builder can carry (``takes``) and its
model list: where the API lists its models (``models_path``, read by
``read_models`` into :class:`ModelInfo` s) and where the gateway lists them for
clients of the dialect, in its shape (``client_models_path``, ``models_body``).
:class:`~streamflow.app.providers.base.Provider`, the gateway and the CLI read them
from the registry (``streamflow.wire.dialects.REQUESTS``), and
:func:`streamflow.wire.dialects.credential_headers` and
:func:`~streamflow.wire.dialects.credential_params` (the one credential list,
:mod:`streamflow.wire.redaction` included) are the unions of every dialect's
``credential`` and ``credential_param``.

``RequestSide.http_request(base_url, request, api_key=...)`` is the streaming
upstream request. Base URLs follow the official SDKs: OpenAI's includes ``/v1``,
Anthropic's and Gemini's do not.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from pydantic_core import to_json

from ...core.errors import ProtocolError, RequestError
from ...core.events import JSONDict
from ...core.message import Message
from ...core.requests import ChatRequest

__all__ = ["BASE_CREDENTIALS", "BASE_CREDENTIAL_PARAMS", "MAX_MODELS", "NEUTRAL_OPTIONS",
           "ErrorInfo", "ModelInfo", "RequestSide", "reply_id"]

BASE_CREDENTIALS: tuple[str, ...] = ("authorization", "proxy-authorization", "api-key")
"""Credential headers of no dialect in particular (bearer tokens, Azure's ``api-key``)."""

BASE_CREDENTIAL_PARAMS: tuple[str, ...] = (
    "api_key", "api-key", "apikey", "access_token", "token", "sig", "x-amz-security-token",
    "x-amz-signature", "resume_token")
"""Query parameters of no dialect in particular that carry a credential (matched without
case): API keys and OAuth tokens in the URL, Azure SAS and AWS presigned signatures, and
the resume token of :mod:`streamflow.servers.web.resume` (``?resume_token=``)."""

NEUTRAL_OPTIONS: frozenset[str] = frozenset({
    "max_tokens", "temperature", "top_p", "stop", "tools", "tool_choice", "parallel_tool_calls",
    "thinking", "response_format", "seed", "top_k", "frequency_penalty", "presence_penalty",
    "user", "metadata", "n"})
"""The options a parser may record in ``ChatRequest.asked`` (see :class:`RequestSide`)."""


@dataclass(frozen=True, slots=True)
class HTTPRequest:
    """A streaming HTTP request: ``POST url`` with ``headers`` and the JSON ``json`` body."""

    url: str
    headers: dict[str, str]
    json: JSONDict
    method: str = "POST"

    @property
    def body(self) -> bytes:
        """The body as UTF-8 JSON bytes."""
        return to_json(self.json)

    def redacted_headers(self) -> dict[str, str]:
        """The headers with credentials masked (``'x-api-key': '<redacted>'``,
        ``'authorization': 'Bearer <redacted>'``), as the repr shows them.

        The credential headers are those of every registered request side
        (:func:`streamflow.wire.dialects.credential_headers`), so a new dialect's key
        header is masked too (:mod:`streamflow.wire.redaction`).
        """
        from ..redaction import redact_headers
        return redact_headers(self.headers)

    def __repr__(self) -> str:
        """The request with no credential in it: header names kept, their values masked,
        the URL's credential parameters (``?key=``) masked (:mod:`streamflow.wire.redaction`)."""
        from ..redaction import redact_url, redact_value, secrets_in
        known = secrets_in(self.headers, self.url)
        return (f"HTTPRequest(url={redact_url(self.url, known)!r}, "
                f"headers={self.redacted_headers()!r}, json={redact_value(self.json, known)!r}, "
                f"method={self.method!r})")


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One error as an envelope writes it: status, type (``None``: the dialect's own for the
    status), message and code."""

    status: int
    message: str
    type: str | None = None
    code: Any = None


MAX_MODELS = 1000
"""The most entries a model list is read with (the rest are left out)."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model of an API's model list, between the dialects' shapes.

    ``id`` is what a request names; ``display_name`` is for people; ``created`` is in
    Unix seconds; ``owned_by`` the organisation; ``max_input_tokens`` /
    ``max_output_tokens`` the context window and the most output tokens;
    ``deprecated`` a model still served but on its way out. ``None``: the list did
    not say.
    """

    id: str
    display_name: str | None = None
    created: int | None = None
    owned_by: str | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    deprecated: bool = False


class _RequestReader:
    """A request side's ``parse`` whose every ``ProtocolError`` (the shared value readers
    raise one, as they do for a stream) is a :class:`RequestError`: a body handed to a
    request side is the client's, and so is its fault."""

    __slots__ = ("parse",)

    def __init__(self, parse: Callable[[Any], ChatRequest]) -> None:
        self.parse = parse

    def __call__(self, body: Any) -> ChatRequest:
        try:
            return self.parse(body)
        except ProtocolError as error:
            raise RequestError(error.message) from None


@dataclass(frozen=True, slots=True)
class RequestSide:
    """The request side of one dialect (see the module doc).

    ``build(request)`` writes the body; ``parse(body)`` reads one (``None``: written
    only, an upstream such as Gemini); ``path`` is the upstream endpoint under the
    base URL (``{model}`` filled in); ``client_path`` the route the gateway serves
    for clients of the dialect (``None``: not served); ``credential`` the header
    carrying the API key (``bearer``: as ``Bearer <key>``); ``credential_param`` the
query parameter the API also takes a key in (Gemini's ``?key=``; ``None``: none),
never written by ``build`` but redacted wherever a URL is shown; ``headers`` are sent on
    every request; ``error_body(info)`` is the dialect's error envelope; ``reply``
    the non-streaming answer of a message (``None``: streams only); ``takes`` the
    neutral options (names of :data:`NEUTRAL_OPTIONS`) ``build`` carries;
    ``tune(body, base_url)`` adjusts a built body for one server (OpenAI's own API
    wants ``max_completion_tokens``);
    ``codec`` names the registered decoder/encoder its streams use (default: ``name``;
    an OpenAI-compatible API with its own path or key header reuses ``openai-chat``'s).
    ``models_path`` is the API's model list under the base URL (``GET``, its query
    included; ``None``: it has none) and ``read_models(body)`` its entries;
    ``client_models_path`` is where the gateway lists models for clients of the
    dialect and ``models_body(models)`` the list in the dialect's shape.
    ``conversation`` is the body's field holding the turns (``messages``, ``input``,
    ``contents``). ``prefill`` says the API continues a conversation's final assistant
    turn instead of answering after it (Anthropic's prefill): a failover chain then
    sends a cut answer as that turn to have it continued
    (:mod:`streamflow.core.continuation`); an endpoint may say otherwise for its server.
    """

    name: str
    build: Callable[[ChatRequest], JSONDict]
    path: str
    error_body: Callable[[ErrorInfo], JSONDict]
    parse: Callable[[Any], ChatRequest] | None = None
    client_path: str | None = None
    credential: str = "authorization"
    bearer: bool = True
    credential_param: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    reply: Callable[[Message], JSONDict] | None = None
    takes: frozenset[str] = frozenset()
    tune: Callable[[JSONDict, str], None] | None = None
    codec: str = ""
    models_path: str | None = None
    read_models: Callable[[Any], list[ModelInfo]] | None = None
    client_models_path: str | None = None
    models_body: Callable[[list[ModelInfo]], JSONDict] | None = None
    conversation: str = "messages"
    prefill: bool = False

    def __post_init__(self) -> None:
        if self.parse is not None and not isinstance(self.parse, _RequestReader):
            object.__setattr__(self, "parse", _RequestReader(self.parse))

    @property
    def stream_dialect(self) -> str:
        """The dialect whose decoder reads and whose encoder writes this dialect's streams."""
        return self.codec or self.name

    def credentials(self, api_key: str | None) -> dict[str, str]:
        """The fixed headers and, when a key is known, the credential header."""
        out = dict(self.headers)
        if api_key:
            out[self.credential] = f"Bearer {api_key}" if self.bearer else api_key
        return out

    def sent_by(self, headers: Mapping[str, str]) -> bool:
        """Whether a request with ``headers`` carries every fixed header of this dialect
        (``anthropic-version``), as its SDK sends them: how the gateway tells apart the
        clients of dialects sharing a path (``GET /v1/models``). Names are lowercase."""
        return all(name in headers for name in self.headers)

    def models_url(self, base_url: str) -> str | None:
        """The URL of the API's model list under ``base_url`` (``None``: it has none)."""
        if self.models_path is None or self.read_models is None:
            return None
        return base_url.rstrip("/") + self.models_path

    def url(self, base_url: str, model: str) -> str:
        """The endpoint URL under ``base_url`` for ``model``."""
        return base_url.rstrip("/") + self.path.format(model=quote(model, safe=""))

    def http_request(self, base_url: str, request: ChatRequest, *, api_key: str | None = None,
                     headers: Mapping[str, str] | None = None) -> HTTPRequest:
        """The streaming HTTP request of ``request`` for this API at ``base_url``."""
        body = self.build(replace(request, stream=True))
        if self.tune is not None:
            self.tune(body, base_url)
        out = {"content-type": "application/json", "accept": "text/event-stream",
               **self.credentials(api_key), **(headers or {})}
        return HTTPRequest(self.url(base_url, request.model), out, body)

    def unsupported(self, request: ChatRequest) -> list[str]:
        """The client's options ``build`` would lose, by the client's own names.

        The neutral options the request asked for that this dialect does not take,
        and, for a request parsed from another dialect, every field of the source
        body the neutral model has no place for (``request.extra``).
        """
        lost = [key for option, key in request.asked.items() if option not in self.takes]
        if request.source != self.name:
            lost += list(request.extra)
        return lost

    def drop(self, request: ChatRequest, keys: list[str]) -> None:
        """Forget the options ``keys`` (client names), as ``--drop-unsupported`` asks."""
        for option, key in list(request.asked.items()):
            if key in keys:
                del request.asked[option]
                request.options.pop(option, None)
        for key in keys:
            request.extra.pop(key, None)


def reply_id(message: Message, prefix: str) -> str:
    """The message's id when it has ``prefix``, else a fresh one (``msg_3f2a...``)."""
    own = message.id or ""
    return own if own.startswith(prefix) else prefix + uuid.uuid4().hex[:24]
