"""A dialect's declaration: the one object its folder's ``__init__.py`` holds.

``DIALECT = Dialect("anthropic", decoder=".decode:AnthropicDecoder",
encoder=".encode:AnthropicEncoder", request=".request:REQUEST")`` says what the dialect
is called and where its parts are, as ``"module:attribute"`` relative to the folder
(imported on first use, so listing the dialects imports no decoder). A folder holding
two dialects (``uni`` and its JSON-lines variant) declares a tuple. The registry
(:mod:`streamflow.wire.dialects`) lists the folders, in sniffing order, and reads each
one's declaration; the dialect's facts (framing, terminator, error envelope...) stay on
its decoder class and its request side, where the code that uses them reads them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Dialect:
    """One dialect: ``name`` and its ``decoder``, ``encoder`` and ``request`` side, each
    ``"module:attribute"`` (``".decode:AnthropicDecoder"``: relative to the folder) or
    ``None`` when the dialect has none."""

    name: str
    decoder: str | None = None
    encoder: str | None = None
    request: str | None = None

    def __post_init__(self) -> None:
        for part in (self.decoder, self.encoder, self.request):
            if part is not None and ":" not in part:
                raise ValueError(f"dialect {self.name!r}: {part!r} is not 'module:attribute'")

    def located(self, folder: str) -> Dialect:
        """This declaration with its relative parts made absolute under package ``folder``."""
        def absolute(part: str | None) -> str | None:
            if part is None or not part.startswith("."):
                return part
            return folder + part
        return Dialect(self.name, absolute(self.decoder), absolute(self.encoder),
                       absolute(self.request))
