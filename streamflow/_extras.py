"""The distribution's name and its extras: what to ``pip install`` when an optional part is missing.

streamflow is published as ``streamflow-llm`` (the name ``streamflow`` on the
package index belongs to another project); the import name and the command stay
``streamflow``. Every "install this" message is built here, so each names the
distribution and the extra the same way.
"""

from __future__ import annotations

DISTRIBUTION = "streamflow-llm"

EXTRA_OF: dict[str, str] = {
    "starlette": "web",
    "uvicorn": "web",
    "ag_ui": "web",
    "redis": "redis",
    "opentelemetry": "otel",
    "mcp": "mcp",
    "jsonschema": "mcp",
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
