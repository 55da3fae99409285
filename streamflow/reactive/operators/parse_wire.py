"""``parse_wire(dialect)``: frames -> the dialect's typed wire events (pydantic models).

Marble (anthropic)::

    frames:       --SSE(message_start)--SSE(content_block_delta)--SSE(ping)--|
    parse_wire(): --MessageStartEvent---ContentBlockDeltaEvent----PingEvent--|

(Not ``decode``: in streamflow "decode" means frames -> UniEvents, what
:func:`~streamflow.reactive.operators.decode` and the dialects' ``decode.py`` do.)

For applications that want the provider's own schema, typed. The models come from
the dialect's ``Decoder.parse_wire`` (e.g. :mod:`streamflow.wire.dialects.anthropic.wire`);
a frame that does not validate is a ``ProtocolError`` keeping the raw text. Empty
data frames (keep-alives) are skipped. ``dialect="auto"`` detects the dialect from
the first frame. To get UniEvents, use :func:`~streamflow.reactive.operators.decode`
on the frames instead (see there for why it does not start from these models).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from reactivex import abc

from ...core.errors import ProtocolError
from ...wire.dialects import get_dialect, require_dialect
from ...wire.framing import CUT, BodyCut
from ._base import Handlers, Operator, stateful

__all__ = ["parse_wire", "wire_parser"]


def wire_parser(dialect: str) -> Callable[[str], BaseModel]:
    """The dialect's ``parse_wire`` (``ValueError`` if the dialect has no wire models)."""
    parse = getattr(get_dialect(dialect), "parse_wire", None)
    if parse is None:
        raise ValueError(f"dialect {dialect!r} has no typed wire models (parse_wire)")
    return parse  # type: ignore[no-any-return]


def parse_wire(dialect: str = "auto", *, framing: str = "sse"
               ) -> Operator[Any, BaseModel | BodyCut]:
    """An operator from frames to typed wire events of ``dialect`` (and ``frame``'s
    :data:`~streamflow.wire.framing.CUT`, passed on for a ``decode`` downstream)."""
    if dialect != "auto":
        wire_parser(dialect)

    def setup(observer: abc.ObserverBase[BaseModel | BodyCut]) -> Handlers:
        parse: Callable[[str], BaseModel] | None = (
            wire_parser(dialect) if dialect != "auto" else None)

        def on_next(frame: Any) -> None:
            nonlocal parse
            if frame is CUT:  # passed on, for a decode downstream
                observer.on_next(frame)
                return
            data = getattr(frame, "data", frame)
            if not data:
                return
            if parse is None:
                parse = wire_parser(require_dialect(frame, framing))
            try:
                model = parse(data)
            except ValidationError as exc:
                raise ProtocolError(f"invalid wire event: {exc.errors()[0]['msg']}",
                                    raw=data) from None
            observer.on_next(model)

        return on_next, observer.on_error, observer.on_completed

    return stateful(setup)
"""The old name of :func:`parse_wire`."""
