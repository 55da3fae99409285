"""Where ``streamflow demo`` streams from: the bundled recording, or a real provider.

The rules, in order (:func:`choose`):

1. ``--offline``: the bundled recording of ``--dialect`` (default ``anthropic``).
2. ``--base-url URL``: that server, live, speaking ``--dialect`` (default
   ``openai-chat``, what llama.cpp, vLLM and Ollama serve); the dialect's key
   variable is sent when set, local servers need none. Both forms of a base
   URL work for every dialect (:func:`base_url_for`): ``http://host:8080`` and
   ``http://host:8080/v1``, even the full endpoint URL.
3. ``--dialect D``: live when D's key variable is set (``ANTHROPIC_API_KEY``,
   ``OPENAI_API_KEY``), else the bundled recording of D.
4. Neither: live Anthropic if ``ANTHROPIC_API_KEY`` is set, else live OpenAI if
   ``OPENAI_API_KEY`` is set, else the bundled Anthropic recording.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from ..app.providers import provider_class
from . import DEMO_DIALECTS

__all__ = ["Plan", "base_url_for", "choose"]

_VERSION = re.compile(r"/v\d+(?:(?:alpha|beta)\d*)?$")
_ENDPOINTS = ("/chat/completions", "/completions", "/messages", "/responses")


@dataclass(frozen=True, slots=True)
class Plan:
    """The demo's source: ``mode``, ``dialect``, and for live mode the URL and key."""

    mode: Literal["replay", "live"]
    dialect: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # no key in a repr
    reason: str = ""

    @property
    def live(self) -> bool:
        """True when a real provider answers."""
        return self.mode == "live"


def base_url_for(dialect: str, url: str) -> str:
    """``url`` in the form ``dialect``'s request builder expects.

    A provider whose public base URL ends in a version (``https://api.openai.com/v1``)
    gets that version added to a bare host (``http://127.0.0.1:8080`` -> ``.../v1``);
    one whose base has none (``https://api.anthropic.com``) loses a trailing
    ``/v1``, so its ``/v1/messages`` is not doubled. A full endpoint URL
    (``.../v1/chat/completions``, ``.../v1/messages``) is cut back to its base first.
    """
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    for endpoint in _ENDPOINTS:
        if path.endswith(endpoint):
            path = path[: -len(endpoint)]
            break
    default = urlsplit(provider_class(dialect).default_base_url).path.rstrip("/")
    wanted = _VERSION.search(default)
    have = _VERSION.search(path)
    if wanted is None and have is not None:
        path = path[: have.start()]
    elif wanted is not None and have is None and not path:
        path = wanted.group()
    return urlunsplit(parts._replace(path=path))


def _key(dialect: str, env: Mapping[str, str]) -> tuple[str, str | None]:
    var = provider_class(dialect).env_keys[0]
    return var, (env.get(var) or None)


def choose(env: Mapping[str, str], *, dialect: str | None = None, base_url: str | None = None,
           offline: bool = False) -> Plan:
    """The plan for these options and environment (see the module doc)."""
    if offline:
        chosen = dialect or "anthropic"
        return Plan("replay", chosen, reason="--offline")
    if base_url:
        chosen = dialect or "openai-chat"
        _, key = _key(chosen, env)
        return Plan("live", chosen, base_url_for(chosen, base_url), key,
                    reason=f"--base-url {base_url}")
    if dialect is not None:
        var, key = _key(dialect, env)
        if key:
            return Plan("live", dialect, None, key, reason=f"{var} is set")
        if dialect not in DEMO_DIALECTS:
            raise ValueError(f"no bundled recording for {dialect!r}; set {var} to stream live")
        return Plan("replay", dialect, reason=f"{var} is not set")
    for candidate in ("anthropic", "openai-chat"):
        var, key = _key(candidate, env)
        if key:
            return Plan("live", candidate, None, key, reason=f"{var} is set")
    return Plan("replay", "anthropic",
                reason="no API key set, no network needed")
