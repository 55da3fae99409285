"""The one error hierarchy of streamflow.

Every failure a stream can meet surfaces as one of these, never as a bare
``KeyError``/``JSONDecodeError``/``ValidationError``. Each carries ``partial``: the
message assembled from everything that arrived before the failure (set by the
layer that owns the assembler, so it is never ``None`` once it reaches you from
:func:`streamflow.assemble` or :func:`streamflow.run`), and ``events``: the events
decoded in the same ``feed`` call before the failure, which a streaming consumer
delivers before the error so nothing is lost::

    StreamflowError                    .partial: Message | None
    ├── FramingError                   bytes that are not a valid frame (bad CRC, bad prelude)
    ├── ProtocolError                  frames that break the dialect (bad JSON, wrong types, order)
    │   └── DialectDetectionError      ``dialect="auto"`` could not tell the dialect
    ├── RequestError                   a request body that breaks its dialect (the client's): status
    ├── IncompleteStreamError          the body ended without the dialect's terminator
    ├── ProviderError                  the provider reported an error: code, type, message
    │   └── HTTPStatusError            a non-2xx answer before any stream: status, headers
    ├── ToolCallArgumentParseError     tool arguments malformed, cut short or not an object
    ├── LimitExceededError             a configured size/count limit was passed: limit, value
    ├── StreamTimeoutError             idle-read timeout or overall deadline: kind, seconds
    ├── TransportError                 the connection failed or dropped mid-body
    │   └── StreamGapError             entries of a stored stream are gone: key, missing ids
    ├── StreamNotFoundError            a stored stream (a Redis key) does not exist
    ├── CancelledStreamError           the consumer cancelled the stream
    ├── NoScopeError                   an async source subscribed outside ``streamflow.scope()``
    ├── SinkError                      a sink raised (the stream itself went to its end)
    ├── OutputValidationError          structured output that does not validate: raw, errors
    └── SchemaRefusedError             a tool's or an output's JSON schema refused: name, reason

When the stream fails *and* sinks raised, ``run()`` raises the stream's error with
the sink failures listed in its ``sink_errors`` attribute.

``ProtocolError`` is the other side's fault in a stream being read (the upstream broke its
dialect); ``RequestError`` is a request streamflow was handed that breaks its dialect (a
client's body, a chat history, a replay-state token): h11 splits its errors the same way.
The gateway answers a ``RequestError`` with its ``status`` in the client's envelope and a
``ProtocolError`` with a 502.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .events import UniEvent
    from .message import Message

__all__ = [
    "StreamflowError",
    "FramingError",
    "ProtocolError",
    "DialectDetectionError",
    "RequestError",
    "IncompleteStreamError",
    "ProviderError",
    "HTTPStatusError",
    "ToolCallArgumentParseError",
    "LimitExceededError",
    "StreamTimeoutError",
    "TransportError",
    "StreamGapError",
    "StreamNotFoundError",
    "CancelledStreamError",
    "NoScopeError",
    "SinkError",
    "OutputValidationError",
    "SchemaRefusedError",
]

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
RETRYABLE_TYPES = frozenset(
    {"overloaded_error", "rate_limit_error", "rate_limit_exceeded", "api_error",
     "provider_unavailable", "routing_unavailable", "timeout", "server_error",
     "ThrottlingException", "ServiceUnavailableException", "ModelStreamErrorException",
     "InternalServerException"}
)


class StreamflowError(Exception):
    """Base of every streamflow error; ``partial`` is the message assembled so far."""

    retryable: bool = False

    def __init__(self, message: str, *, partial: Message | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.partial = partial
        #: UniEvents decoded in the same ``feed`` call before the failure and not yet
        #: returned; streaming consumers deliver them before the error.
        self.events: list[UniEvent] = []
        #: with ``stream(..., output=T)``: the last partial snapshot of the output
        #: (``None`` when nothing parsed before the failure).
        self.partial_output: Any = None
        #: ``(sink, exception)`` of each sink that raised in the same run (``run()`` sets
        #: them when the stream failed too: the stream's error wins and lists them here,
        #: as :class:`SinkError` ``.errors`` does).
        self.sink_errors: list[tuple[Any, BaseException]] = []

    def with_partial(self, partial: Message) -> StreamflowError:
        """Attach the partial message unless one is already set; returns ``self``."""
        if self.partial is None:
            self.partial = partial
        return self

    def attach(self, partial: Message | None, before: list[UniEvent] | None = None
               ) -> StreamflowError:
        """The one place context is added to an error on its way out; returns ``self``.

        ``partial`` is set unless one already is; ``before`` (events decoded earlier
        in the same call and not yet delivered) goes in front of :attr:`events`.
        """
        if before:
            self.events = before + self.events
        if self.partial is None and partial is not None:
            self.partial = partial
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description: ``{"type", "message", ...}``."""
        return {"type": type(self).__name__, "message": self.message}


class FramingError(StreamflowError):
    """The byte stream is not valid for its framing (e.g. an AWS event-stream CRC mismatch)."""


class ProtocolError(StreamflowError):
    """A frame was not a valid event of the dialect (bad JSON, wrong field types, bad order)."""

    def __init__(self, message: str, *, raw: str | bytes | None = None,
                 partial: Message | None = None) -> None:
        super().__init__(message, partial=partial)
        self.raw = raw


class DialectDetectionError(ProtocolError):
    """``dialect="auto"`` could not recognise the dialect from the first events."""


class RequestError(StreamflowError):
    """A request streamflow was handed breaks its dialect or a limit: a client's body to
    the gateway, a chat history, a replay-state token. The client's fault (a
    ``ProtocolError`` is the upstream's); ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class IncompleteStreamError(StreamflowError):
    """The body ended before the dialect's terminator (``message_stop``, ``[DONE]``...)."""

    retryable = True


class ProviderError(StreamflowError):
    """The provider reported an error, in-band (an ``error`` event) or as an HTTP status.

    ``code`` is the provider's code (an HTTP-like number or a string), ``type`` its
    category (``overloaded_error``, ``rate_limit_exceeded``...), ``body`` the raw error
    object. ``retryable`` follows the code/type (429, 5xx, overloaded).
    """

    def __init__(self, message: str, *, code: int | str | None = None, type: str | None = None,
                 request_id: str | None = None, body: Any = None,
                 partial: Message | None = None) -> None:
        super().__init__(message, partial=partial)
        self.code = code
        self.type = type
        self.request_id = request_id
        self.body = body
        status = code if isinstance(code, int) else None
        self.retryable = (status in RETRYABLE_STATUS) or (type in RETRYABLE_TYPES)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(code=self.code, error_type=self.type, request_id=self.request_id)
        return out


class HTTPStatusError(ProviderError):
    """A non-2xx HTTP answer before any stream; ``status`` and ``headers`` are kept.

    ``retry_after`` is the server's ``retry-after`` in seconds, when it sent one.
    """

    def __init__(self, message: str, *, status: int, headers: dict[str, str] | None = None,
                 type: str | None = None, body: Any = None, request_id: str | None = None,
                 partial: Message | None = None) -> None:
        super().__init__(message, code=status, type=type, request_id=request_id, body=body,
                         partial=partial)
        self.status = status
        self.headers = dict(headers or {})
        self.retry_after = _retry_after(self.headers)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["status"] = self.status
        return out


def _retry_after(headers: dict[str, str]) -> float | None:
    for key, value in headers.items():
        if key.lower() in ("retry-after", "retry-after-ms"):
            try:
                seconds = float(value)
            except ValueError:
                return None
            return seconds / 1000 if key.lower() == "retry-after-ms" else seconds
    return None


class ToolCallArgumentParseError(StreamflowError):
    """A tool call's arguments are malformed, cut short, or not a JSON object.

    Raised in place of the ``tool_call.done`` item; ``arguments`` is the raw text.
    """

    def __init__(self, message: str, *, tool_call_id: str = "", name: str = "",
                 arguments: str = "", partial: Message | None = None) -> None:
        super().__init__(message, partial=partial)
        self.tool_call_id = tool_call_id
        self.name = name
        self.arguments = arguments

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(tool_call_id=self.tool_call_id, name=self.name)
        return out


class LimitExceededError(StreamflowError):
    """A configured limit (see :class:`streamflow.Limits`) was passed; ``limit`` names it."""

    def __init__(self, limit: str, maximum: int, *, partial: Message | None = None) -> None:
        super().__init__(f"limit {limit}={maximum} exceeded", partial=partial)
        self.limit = limit
        self.maximum = maximum

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(limit=self.limit, maximum=self.maximum)
        return out


class StreamTimeoutError(StreamflowError):
    """No bytes for ``seconds`` (``kind="idle"``), or the overall ``"deadline"`` passed."""

    retryable = True

    def __init__(self, kind: str, seconds: float, *, partial: Message | None = None) -> None:
        super().__init__(f"{kind} timeout after {seconds:g}s", partial=partial)
        self.kind = kind
        self.seconds = seconds


class TransportError(StreamflowError):
    """The connection failed or dropped while reading the body."""

    retryable = True


class StreamGapError(TransportError):
    """Entries in the middle of a stream are gone: ``missing`` names their ids, in order.

    What a reader meets when Redis lost writes it had acknowledged -- a restart that
    kept an older copy, a cluster failover to a replica that had not received them
    (the writer's ``replicas=`` option waits for replicas to prevent it) -- or when
    another writer shares the key. ``after`` is the id of the last entry the reader
    had, ``key`` the stream's key. Sent over the ``uni`` wire it reads back as a
    :class:`TransportError` with the same message.
    """

    def __init__(self, key: str, missing: tuple[str, ...], *, after: str | None = None,
                 partial: Message | None = None) -> None:
        shown = missing[0] if len(missing) == 1 else f"{missing[0]} to {missing[-1]}"
        super().__init__(f"entries {shown} ({len(missing)}) of the stream {key!r} are missing "
                         "(Redis lost acknowledged writes: a restart, or a failover to a "
                         "replica that did not have them; or another writer shares the key)",
                         partial=partial)
        self.key = key
        self.missing = missing
        self.after = after

    def to_dict(self) -> dict[str, Any]:
        return {"type": "TransportError", "message": self.message,
                "missing": list(self.missing)}


class StreamNotFoundError(StreamflowError):
    """A stored stream to replay (a Redis Streams ``key``) does not exist: never started,
    or expired after its terminal entry."""

    def __init__(self, message: str, *, key: str = "", partial: Message | None = None) -> None:
        super().__init__(message, partial=partial)
        self.key = key


class CancelledStreamError(StreamflowError):
    """The consumer cancelled the stream (dispose, Ctrl-C); the connection was closed."""


class NoScopeError(StreamflowError, RuntimeError):
    """An asynchronous source was subscribed outside ``async with streamflow.scope()``."""


class SinkError(StreamflowError):
    """One or more sinks raised; ``errors`` lists ``(sink, exception)`` in failure order.

    The stream itself went to its end; ``partial`` is the whole message.
    """

    def __init__(self, errors: list[tuple[Any, BaseException]], *,
                 partial: Message | None = None) -> None:
        names = ", ".join(f"{type(s).__name__}: {e!r}" for s, e in errors)
        super().__init__(f"{len(errors)} sink(s) failed ({names})", partial=partial)
        self.errors = errors


class OutputValidationError(StreamflowError):
    """The structured output did not validate against its type (``stream(..., output=T)``).

    ``raw`` is the output's JSON text as it arrived (fences removed), ``errors`` pydantic's
    error list (``ValidationError.errors()``, or the JSON schema validator's errors as
    ``{"type", "loc", "msg"}`` dicts), ``partial_output`` the last partial snapshot and
    ``partial`` the message.
    """

    def __init__(self, message: str, *, raw: str, errors: list[dict[str, Any]],
                 partial: Message | None = None, partial_output: Any = None) -> None:
        super().__init__(message, partial=partial)
        self.raw = raw
        self.errors = errors
        self.partial_output = partial_output

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(errors=self.errors)
        return out


class SchemaRefusedError(StreamflowError):
    """A JSON schema streamflow does not validate with, refused before any call is checked.

    Raised when an MCP server's tool is listed (its ``inputSchema``) or a structured
    output's schema dict is given: the schema refers outside itself (``http(s)://``,
    ``file://``, a relative ``other.json``, a ``urn:`` it does not define -- nothing is
    fetched or read), has a reference that resolves nowhere inside it, switches dialect
    inside itself (a nested ``$schema``), or passes a size or depth limit. ``name`` is
    the tool's name (``"output"`` for an output schema), ``reason`` what is wrong,
    ``ref`` the reference refused (``None`` for a limit), ``limit``/``maximum`` the limit
    passed (``None`` for a reference). See docs/mcp.md, "Schema references".
    """

    def __init__(self, name: str, reason: str, *, ref: str | None = None,
                 limit: str | None = None, maximum: int | None = None,
                 partial: Message | None = None) -> None:
        what = "output schema" if name == "output" else f"input schema of tool {name!r}"
        super().__init__(f"the {what} was refused: {reason}", partial=partial)
        self.name = name
        self.reason = reason
        self.ref = ref
        self.limit = limit
        self.maximum = maximum

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(name=self.name, reason=self.reason, ref=self.ref, limit=self.limit,
                   maximum=self.maximum)
        return out
