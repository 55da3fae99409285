"""The distribution's name and its extras: what to ``pip install`` when an optional part is missing.

streamflow is published as ``streamflow-llm`` (the name ``streamflow`` on the
package index belongs to another project); the import name and the command stay
``streamflow``. Every "install this" message is built here, so each names the
distribution and the extra the same way.
"""

from __future__ import annotations

from importlib.util import find_spec

DISTRIBUTION = "streamflow-llm"
VERSION = "0.1.0"
"""The package version (``streamflow.__version__``; pyproject.toml says the same)."""

EXTRA_OF: dict[str, str] = {
    "starlette": "web",
    "uvicorn": "web",
    "ag_ui": "web",
    "httptools": "gateway",
    "redis": "redis",
    "opentelemetry": "otel",
    "mcp": "mcp",
    "httpx2": "mcp",
    "orjson": "fast",
}
"""Top-level import name of an optional dependency -> the extra that installs it."""


def install_line(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'streamflow-llm[web]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def extra_for(module: str | None) -> str | None:
    """The extra that installs the (possibly dotted) ``module``; ``None`` if none does."""
    if not module:
        return None
    return EXTRA_OF.get(module.partition(".")[0])


class MissingExtra(ModuleNotFoundError):
    """An optional part of streamflow imported without its extra: one line naming it."""


def require(part: str, extra: str, *modules: str) -> None:
    """Raise :class:`MissingExtra` unless every one of ``modules`` (top-level import names)
    is installed; ``part`` is what needs them (``"streamflow.servers.web"``).

    Called first by each optional package (``web``, ``gateway``, ``_redis``...), so every
    module below it fails the same way: ``streamflow.servers.web needs the web extra: pip install
    'streamflow-llm[web]' (starlette is not installed)``.
    """
    absent = [m for m in modules if find_spec(m) is None]
    if absent:
        error = MissingExtra(f"{part} needs the {extra} extra: {install_line(extra)} "
                             f"({', '.join(absent)} {'is' if len(absent) == 1 else 'are'} "
                             "not installed)", name=absent[0])
        raise error
