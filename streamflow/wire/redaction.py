"""No credential in any text streamflow produces: reprs, errors, logs, spans, recordings.

One list drives it: :func:`streamflow.wire.dialects.credential_headers` (every registered
request side's key header, ``authorization``, ``proxy-authorization``, ``api-key``)
and :func:`streamflow.wire.dialects.credential_params` (the query parameters that carry
one: Gemini's ``key``, ``api_key``, ``access_token``...). A new dialect's
``credential`` or ``credential_param`` is masked everywhere with nothing else to
change. What is masked keeps its name, so the output stays useful::

    redact_headers({"x-api-key": "sk-...", "accept": "text/event-stream"})
    # {'x-api-key': '<redacted>', 'accept': 'text/event-stream'}
    redact_headers({"authorization": "Bearer sk-..."})   # {'authorization': 'Bearer <redacted>'}
    redact_url("https://h/v1beta/models/m:streamGenerateContent?alt=sse&key=AIza...")
    # 'https://h/v1beta/models/m:streamGenerateContent?alt=sse&key=<redacted>'

:func:`redact_text` masks, in any text: the values it is given (``secrets``: the keys
a request carried, from :func:`secrets_in`, so a key the upstream echoes back in its
error body is masked too), a credential parameter's value in a URL, a URL's password,
a credential header written as ``name: value`` / ``'name': 'value'``, a
``Bearer``/``Basic`` token, and keys of the well-known shapes (``sk-...``,
``AIza...``). :func:`redact_value` does the same through JSON-like values (a dict
key naming a credential has its value masked). :func:`scrub_error` cleans an
exception in place (its message, args, ``__notes__``, body, headers, raw text and
every exception chained to it: the httpx error it wraps included).

Where it is applied (docs/SECURITY.md, "Credentials"): ``HTTPRequest``,
``Provider`` and the gateway's ``Upstream`` reprs; the HTTP sources' errors (with the
request's own credential values); every stream error before a sink sees it (the
run's fan-out); an Agent turn's error; the gateway's upstream errors and its
in-band errors; every encoder's in-band error; the log, OTel and recorder sinks;
the ``streamflow.servers.gateway`` / ``streamflow.servers.web`` loggers (:class:`RedactingFilter`)
and the gateway command's log handlers.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlsplit

__all__ = ["MIN_SECRET", "REDACTED", "ChunkMasker", "RedactingFilter", "redact_headers",
           "redact_text", "redact_url", "redact_value", "redacting_logger", "scrub_error",
           "report_sent", "secrets_in", "sending_to", "source_secrets", "with_secrets"]

REDACTED = "<redacted>"
"""What a credential is replaced by (its name, a header's or a parameter's, is kept)."""

MIN_SECRET = 8
"""A known value shorter than this is no key (``api_key="k"`` in a test): it is not
searched for in text, where it would mask every ``k``."""

_SCHEMES = ("bearer", "basic")
_TOKEN = r"[A-Za-z0-9._~+/=-]"
_BEARER = re.compile(rf"\b(Bearer|Basic)\s+(?={_TOKEN}*\d){_TOKEN}{{8,}}", re.IGNORECASE)
_USERINFO = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s/@:]*:)[^\s/@]+@", re.IGNORECASE)
_SHAPES = re.compile(r"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,})")
"""Keys of a well-known shape (OpenAI, Anthropic, OpenRouter ``sk-...``; Google
``AIza...``), masked even where nothing told us the value."""

E = TypeVar("E", bound=BaseException)


def _names() -> tuple[frozenset[str], frozenset[str]]:
    from .dialects import credential_headers, credential_params
    return credential_headers(), credential_params()


@lru_cache(maxsize=8)
def _patterns(headers: frozenset[str], params: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    def alternatives(names: Iterable[str]) -> str:
        return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))

    query = re.compile(rf"([?&;](?:{alternatives(params)})=)[^&#\s\"'<>;]+", re.IGNORECASE)
    header = re.compile(
        rf"(?<![\w-])((?:{alternatives(headers)})[\"']?\s*[:=]\s*[\"']?)"
        rf"(?:(Bearer|Basic)\s+)?[^\s\"',;}}\]&]+", re.IGNORECASE)
    return query, header


def _header_value(match: re.Match[str]) -> str:
    scheme = match.group(2)
    return match.group(1) + (f"{scheme} " if scheme else "") + REDACTED


def _known(secrets: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= MIN_SECRET:
            found.add(secret)
            found.add(quote(secret, safe=""))  # as it would sit in a URL
    return sorted(found, key=len, reverse=True)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential masked (see the module doc); ``secrets`` are values
    known to be credentials (:func:`secrets_in`), masked wherever they appear."""
    for secret in _known(secrets):
        if secret in text:
            text = text.replace(secret, REDACTED)
    query, header = _patterns(*_names())
    text = query.sub(lambda m: m.group(1) + REDACTED, text)
    text = header.sub(_header_value, text)
    text = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _SHAPES.sub(REDACTED, text)


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """``url`` with its credential parameters' values and its password masked."""
    return redact_text(url, secrets)


def _masked(value: str) -> str:
    scheme, _, token = value.strip().partition(" ")
    if token and scheme.lower() in _SCHEMES:
        return f"{scheme} {REDACTED}"
    return REDACTED


def redact_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]],
                   secrets: Iterable[str] = ()) -> dict[str, str]:
    """The headers with every credential header's value masked (a ``Bearer``/``Basic``
    scheme kept), the names and the other values as they were (``secrets`` masked in them)."""
    names = _names()[0]
    items = headers.items() if isinstance(headers, Mapping) else headers
    known = list(secrets)
    return {k: (_masked(v) if k.lower() in names else redact_text(v, known) if known else v)
            for k, v in items}


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A JSON-like ``value`` (dicts, lists, strings...) with every credential masked: a
    dict key naming a credential header or parameter has its value replaced, every
    string goes through :func:`redact_text`. Other values are returned as they are."""
    headers, params = _names()
    return _value(value, _known(secrets), headers | params, 0)


def _value(value: Any, known: list[str], names: frozenset[str], depth: int) -> Any:
    if isinstance(value, str):
        return redact_text(value, known)
    if depth > 64:  # a value nested this deep is no JSON we made: leave it
        return value
    if isinstance(value, Mapping):
        return {k: (REDACTED if isinstance(k, str) and k.lower() in names and v
                    else _value(v, known, names, depth + 1)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        out = [_value(v, known, names, depth + 1) for v in value]
        return out if isinstance(value, list) else tuple(out)
    if isinstance(value, (bytes, bytearray)) and known:
        data = bytes(value)
        for secret in known:
            data = data.replace(secret.encode(), REDACTED.encode())
        return data
    return value


def secrets_in(headers: Mapping[str, str] | None = None, url: Any = None) -> frozenset[str]:
    """The credential values a request carries: its credential headers' values (a
    bearer's token, a basic password), its URL's credential parameters and password.
    Values shorter than :data:`MIN_SECRET` are left out (see there)."""
    header_names, param_names = _names()
    found: set[str] = set()
    for name, value in (headers or {}).items():
        if name.lower() not in header_names or not isinstance(value, str):
            continue
        value = value.strip()
        found.add(value)
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if token and scheme.lower() in _SCHEMES:
            found.add(token)
            if scheme.lower() == "basic":
                found.update(_basic(token))
    if url is not None:
        parts = urlsplit(str(url))
        for name, value in parse_qsl(parts.query, keep_blank_values=False):
            if name.lower() in param_names:
                found.add(value)
        try:
            if parts.password:
                found.add(parts.password)
        except ValueError:
            pass
    return frozenset(s for s in found if len(s) >= MIN_SECRET)



_AMBIENT: ContextVar[frozenset[str]] = ContextVar("streamflow_secrets", default=frozenset())


@contextmanager
def with_secrets(values: Iterable[str]) -> Iterator[None]:
    """Within the block, the runs made and the sources a :class:`~streamflow.Recorder`
    taps count ``values`` as credentials too (:func:`source_secrets`): an Agent's turn
    tells its run the key its request carries, whatever its ``send`` returns."""
    token = _AMBIENT.set(_AMBIENT.get() | frozenset(values))
    try:
        yield
    finally:
        _AMBIENT.reset(token)


_SENT: ContextVar[set[str] | None] = ContextVar("streamflow_sent", default=None)


@contextmanager
def sending_to(sent: set[str]) -> Iterator[None]:
    """Within the block (a run subscribing to its source, and the tasks it starts),
    :func:`report_sent` adds to ``sent``."""
    token = _SENT.set(sent)
    try:
        yield
    finally:
        _SENT.reset(token)


def report_sent(values: Iterable[str]) -> None:
    """A source tells the run it is read by the credential values its request carried
    (the HTTP sources do at each request), however the source is wrapped or piped: the
    run's errors are scrubbed of them and a Recorder tapping it masks them."""
    sent = _SENT.get()
    if sent is not None:
        sent.update(values)


def source_secrets(source: Any) -> frozenset[str]:
    """The credential values ``source`` sent (an HTTP source's ``secrets``), looked for
    through the sources wrapping another (a ``pipeline()``'s ``upstream``, a recorder's
    or a fault's ``inner``), with those of the enclosing :func:`with_secrets` blocks and
    those reported to the enclosing run (:func:`report_sent`)."""
    sent = _SENT.get()
    ambient = _AMBIENT.get() | frozenset(sent) if sent else _AMBIENT.get()
    for _ in range(8):
        found = getattr(source, "secrets", None)
        if isinstance(found, frozenset):
            return found | ambient
        inner = getattr(source, "upstream", None) or getattr(source, "inner", None)
        if inner is None:
            break
        source = inner
    return ambient

class ChunkMasker:
    """Known credential values masked in a byte stream cut into chunks, each value
    replaced by :data:`REDACTED` even when the chunking splits it (a recording of an
    upstream body echoing the key it was sent). :meth:`feed` takes a chunk with its
    ``tag`` (its arrival time) and returns the chunks ready to write, masked; a chunk
    whose end could begin a known value is held until the next one shows whether it
    does (in the common case none is held), :meth:`flush` returns what is held. Bytes of
    a value are taken out of the chunks they arrived in, the mask put in the first."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        #: the values masked (and their URL-encoded forms), longest first
        self.values = _known(secrets)
        self.known = [s.encode() for s in self.values]
        self.held: list[tuple[Any, bytes]] = []

    def feed(self, tag: Any, chunk: bytes) -> list[tuple[Any, bytes]]:
        if not self.known:
            return [*self.flush(), (tag, chunk)]
        self.held.append((tag, chunk))
        joined = b"".join(c for _, c in self.held)
        if not any(s in joined for s in self.known):
            hold = self._prefix(joined)
        else:
            self.held = self._masked(joined)
            hold = self._prefix(b"".join(c for _, c in self.held))
        ready: list[tuple[Any, bytes]] = []
        rest = sum(len(c) for _, c in self.held)
        while self.held and rest - len(self.held[0][1]) >= hold:
            rest -= len(self.held[0][1])
            ready.append(self.held.pop(0))
        return ready

    def flush(self) -> list[tuple[Any, bytes]]:
        held, self.held = self.held, []
        return held

    def _prefix(self, data: bytes) -> int:
        """How many of ``data``'s last bytes could begin a known value."""
        longest = 0
        for secret in self.known:
            for size in range(min(len(secret) - 1, len(data)), longest, -1):
                if data.endswith(secret[:size]):
                    longest = size
                    break
        return longest

    def _masked(self, joined: bytes) -> list[tuple[Any, bytes]]:
        """The held chunks with every known value in ``joined`` (their bytes) masked."""
        spans: list[tuple[int, int]] = []
        for secret in self.known:  # longest first (see _known)
            start = joined.find(secret)
            while start >= 0:
                end = start + len(secret)
                if not any(s < end and start < e for s, e in spans):
                    spans.append((start, end))
                start = joined.find(secret, end)
        spans.sort()
        out: list[tuple[Any, bytes]] = []
        offset = 0
        for tag, chunk in self.held:
            lo, hi = offset, offset + len(chunk)
            offset = hi
            piece = bytearray()
            at = lo
            for s, e in spans:
                if e <= lo or s >= hi:
                    continue
                piece += joined[at:max(s, lo)]
                if s >= lo:  # the value begins in this chunk: the mask goes here
                    piece += REDACTED.encode()
                at = min(e, hi)
            piece += joined[at:hi]
            out.append((tag, bytes(piece)))
        return out


def _basic(token: str) -> list[str]:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return []
    return [decoded, decoded.partition(":")[2]]


def scrub_error(error: E, secrets: Iterable[str] = ()) -> E:
    """``error`` with every credential masked, in place, and returned: its message and
    ``args``, its ``__notes__``, a streamflow error's ``body``, ``headers`` and ``raw``
    text, a :class:`~streamflow.core.errors.SinkError`'s errors, and every exception in its
    ``__cause__`` / ``__context__`` chain (the httpx error it wraps, whose message may
    name the URL). ``secrets`` are values known to be credentials (:func:`secrets_in`)."""
    known = _known(secrets)
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        _scrub_one(current, known)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        inner = getattr(current, "errors", None)
        if type(current).__name__ == "SinkError" and isinstance(inner, list):
            todo.extend(e for _, e in inner if isinstance(e, BaseException))
    return error


def _scrub_one(error: BaseException, known: list[str]) -> None:
    from ..core.errors import HTTPStatusError, ProtocolError, ProviderError, StreamflowError

    try:
        args = tuple(redact_text(a, known) if isinstance(a, str) else a for a in error.args)
        if args != error.args:
            error.args = args
    except (AttributeError, TypeError):  # an exception type whose args are fixed
        pass
    notes = getattr(error, "__notes__", None)
    if isinstance(notes, list):
        notes[:] = [redact_text(n, known) if isinstance(n, str) else n for n in notes]
    if not isinstance(error, StreamflowError):
        return
    error.message = redact_text(error.message, known)
    if isinstance(error, ProviderError) and error.body is not None:
        error.body = redact_value(error.body, known)
    if isinstance(error, HTTPStatusError):
        error.headers = redact_headers(error.headers, known)
    if isinstance(error, ProtocolError) and error.raw is not None:
        error.raw = redact_value(error.raw, known)


_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "taskName"}


class RedactingFilter(logging.Filter):
    """A logging filter masking credentials in a record: its message (formatted with its
    args), its exception (scrubbed in place, so any formatter prints it clean) and its
    ``extra`` fields. On a logger it sees that logger's records; on a handler, every
    record the handler writes (the gateway command puts it on uvicorn's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        # the arguments masked one by one first, so a formatter that reads ``args``
        # (uvicorn's access lines) still finds them; an exception argument is scrubbed
        if isinstance(record.args, tuple):
            record.args = tuple(_argument(a) for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {k: _argument(a) for k, a in record.args.items()}
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot format: logging reports it (msg, args)
            message = None
            record.msg = redact_text(str(record.msg))
        if message is not None:  # what is left (in msg, an argument's str) masked whole
            clean = redact_text(message)
            if clean != message:
                record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            scrub_error(record.exc_info[1])
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD and isinstance(value, (str, Mapping, list, tuple)):
                setattr(record, key, redact_value(value))
        return True


def _argument(value: Any) -> Any:
    """A log record's argument masked: text redacted, an exception scrubbed in place."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, BaseException):
        return scrub_error(value)
    return value


def redacting_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with a :class:`RedactingFilter` on it (once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, RedactingFilter) for f in logger.filters):
        logger.addFilter(RedactingFilter())
    return logger
