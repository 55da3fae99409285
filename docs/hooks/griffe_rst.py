"""Griffe extension: the docstrings' reST roles and literal markers read as Markdown.

The docstrings are written for ``help()`` and editors: ``:class:`~streamflow.x.Y```
and double-backtick literals. mkdocstrings renders Markdown, so a role becomes inline
code of its target (``~`` keeps the last name only, ``text <target>`` the text) and
a paragraph ending in ``::`` ends in ``:`` (its indented block is already code).
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

ROLE = re.compile(r":(?:py:)?\w+:`(~?)([^`<]*?)(?:\s*<([^>`]+)>)?`")


def _role(match: re.Match[str]) -> str:
    short, text, target = match.group(1), match.group(2).strip(), match.group(3)
    if target:
        return f"`{text}`"
    return f"`{text.rsplit('.', 1)[-1] if short else text}`"


def markdown(text: str) -> str:
    """``text`` with reST roles as inline code and ``::`` paragraph ends as ``:``."""
    text = ROLE.sub(_role, text)
    return re.sub(r"(?<=\S)::(?=\n)", ":", text)


class RestRoles(Extension):
    """Rewrite every docstring griffe loads (see the module doc)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
