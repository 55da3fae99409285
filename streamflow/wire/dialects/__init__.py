"""The dialect registry: one folder per dialect (a provider API's protocol), one line each here.

:data:`FOLDERS` lists the dialect folders, in the order ``dialect="auto"`` asks each
decoder's ``sniff`` about the first frame (most specific first); each folder's
``__init__.py`` declares its dialect once (``DIALECT = Dialect(...)``: name, decoder,
encoder, request side; :mod:`._declaration`), and :func:`register` reads it. A dialect
outside the package is one ``register("your_package.your_dialect")`` call. The views
built from the declarations map a name to ``"module:attribute"``: ``DIALECTS`` its
:class:`Decoder`, ``ENCODERS`` its :class:`Encoder` (with :data:`TARGETS`, the
write-only UI protocols ``vercel-ui`` and ``ag-ui``), ``REQUESTS`` the
:class:`~streamflow.wire.dialects.request_base.RequestSide` its ``request.py``
declares (parser, builder, endpoints, credentials, error envelope); each is imported
on first use. Providers, the gateway (one client route per request side with a
``client_path``), the CLI and redaction (:func:`credential_headers`,
:func:`credential_params`: the one credential list :mod:`streamflow.wire.redaction`
masks with) read them from here.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ...core.errors import DialectDetectionError
from ._declaration import Dialect
from .base import Decoder
from .encoder import Encoder

if TYPE_CHECKING:
    from .request_base import RequestSide

__all__ = ["DIALECTS", "ENCODERS", "FOLDERS", "REQUESTS", "TARGETS", "Decoder", "Dialect",
           "Encoder", "credential_headers", "credential_params", "detect_dialect",
           "dialect_names", "encoder_names", "get_dialect", "get_encoder", "get_request",
           "register", "request_names", "wire_models"]

FOLDERS: tuple[str, ...] = tuple(f"streamflow.wire.dialects.{folder}" for folder in (
    "anthropic", "openai_responses", "gemini", "openai_chat", "bedrock", "bedrock_invoke",
    "ollama", "openrouter_media", "embeddings", "uni"))
"""The dialect folders (packages), in sniffing order."""

TARGETS: dict[str, str] = {
    "vercel-ui": "streamflow.wire.targets.vercel_ui.encode:VercelUIEncoder",
    "ag-ui": "streamflow.wire.targets.ag_ui.encode:AGUIEncoder",
}
"""The write-only targets (no decoder, no request side: not dialects), by name."""

DIALECTS: dict[str, str] = {}
ENCODERS: dict[str, str] = {}
REQUESTS: dict[str, str] = {}


def register(folder: str) -> tuple[Dialect, ...]:
    """Add the dialect(s) package ``folder`` declares (its ``DIALECT``) to the registry,
    after the registered ones; returns them. Registering a name again replaces it."""
    declared = getattr(import_module(folder), "DIALECT", None)
    dialects = declared if isinstance(declared, tuple) else (declared,)
    if not dialects or not all(isinstance(d, Dialect) for d in dialects):
        raise TypeError(f"{folder} declares no DIALECT = Dialect(...) in its __init__.py")
    located = tuple(d.located(folder) for d in dialects)
    for dialect in located:
        for registry, part in ((DIALECTS, dialect.decoder), (ENCODERS, dialect.encoder),
                               (REQUESTS, dialect.request)):
            if part is not None:
                registry[dialect.name] = part
        _loaded.pop(dialect.name, None)
        _loaded_encoders.pop(dialect.name, None)
    return located


_loaded: dict[str, type[Decoder]] = {}
_loaded_encoders: dict[str, type[Encoder]] = {}

for _folder in FOLDERS:
    register(_folder)
del _folder
ENCODERS.update(TARGETS)


def _load(registry: dict[str, str], kind: str, name: str) -> Any:
    try:
        target = registry[name]
    except KeyError:
        raise ValueError(
            f"unknown {kind} {name!r}; known: {', '.join(registry)}") from None
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)


def dialect_names() -> list[str]:
    """Registered dialect names, in sniffing order."""
    return list(DIALECTS)


def get_dialect(name: str) -> type[Decoder]:
    """The decoder class registered as ``name``; ``ValueError`` for an unknown name."""
    cls = _loaded.get(name)
    if cls is None:
        cls = _loaded[name] = _load(DIALECTS, "dialect", name)
    return cls


def encoder_names() -> list[str]:
    """Registered encoder target names."""
    return list(ENCODERS)


def get_encoder(name: str) -> type[Encoder]:
    """The encoder class registered as ``name``; ``ValueError`` for an unknown name."""
    cls = _loaded_encoders.get(name)
    if cls is None:
        cls = _loaded_encoders[name] = _load(ENCODERS, "encoder target", name)
    return cls


def wire_models(name: str) -> ModuleType:
    """The typed wire models of dialect ``name``: its folder's ``wire`` module (the pydantic
    events :func:`~streamflow.reactive.operators.parse_wire` yields), the one way to them
    from outside the folder. ``ValueError`` for an unknown dialect or one without."""
    module_name = DIALECTS.get(name, "").partition(":")[0]
    if not module_name:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")
    package = module_name.rpartition(".")[0]
    try:
        return import_module(f"{package}.wire")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.wire":
            raise
        raise ValueError(f"dialect {name!r} has no typed wire models") from None


def request_names() -> list[str]:
    """Dialects with a request side (upstreams the gateway and providers can speak)."""
    return list(REQUESTS)


def get_request(name: str) -> RequestSide:
    """The request side of dialect ``name``; ``ValueError`` for one without."""
    found: RequestSide = _load(REQUESTS, "dialect with a request side", name)
    return found


def credential_headers() -> frozenset[str]:
    """Every header that carries a credential: the one list redaction and the gateway use."""
    from .request_base import BASE_CREDENTIALS
    return frozenset(BASE_CREDENTIALS) | {get_request(n).credential for n in REQUESTS}


def credential_params() -> frozenset[str]:
    """Every query parameter that carries a credential (lowercase): Gemini's ``key`` and
    the rest of the request sides' ``credential_param``, plus ``BASE_CREDENTIAL_PARAMS``.
    With :func:`credential_headers`, the one list :mod:`streamflow.wire.redaction` uses."""
    from .request_base import BASE_CREDENTIAL_PARAMS
    sides = (get_request(n).credential_param for n in REQUESTS)
    return frozenset(BASE_CREDENTIAL_PARAMS) | {p.lower() for p in sides if p}


def detect_dialect(frame: Any, framing: str) -> str | None:
    """The first registered dialect of ``framing`` whose ``sniff`` accepts ``frame``.

    NDJSON frames are data-only SSE events, so ``sse`` dialects are asked too when
    ``framing`` is ``"ndjson"`` (a ``.jsonl`` recording of an SSE stream).
    """
    accepted = (framing, "sse") if framing == "ndjson" else (framing,)
    for name in DIALECTS:
        cls = get_dialect(name)
        if cls.framing in accepted and cls.sniff(frame):
            return name
    return None


def require_dialect(frame: Any, framing: str) -> str:
    """Like :func:`detect_dialect`, but raise ``DialectDetectionError`` when nothing matches."""
    name = detect_dialect(frame, framing)
    if name is None:
        raw = getattr(frame, "data", frame)
        raise DialectDetectionError(
            f"cannot detect the dialect of a {framing} body from {str(raw)[:80]!r}", raw=raw)
    return name
