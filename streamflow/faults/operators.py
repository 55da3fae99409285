"""Faults as a reactivex operator over an observable of body chunks.

Marble (``inject(Cut(5))`` over chunks of 3 bytes)::

    source            --b"abc"--b"def"--b"ghi"--|
    inject(Cut(5))    --b"abc"--b"de"|                   (upstream disposed)
    inject(Cut(5, reset=True))  --b"abc"--b"de"#TransportError

Each subscription gets fresh fault states. A fault that ends the body disposes the
upstream subscription (for HTTP: the response is closed). A :class:`Stall` needs
something that can wait -- use :func:`~streamflow.faults.serve.faulty_source` or
:func:`~streamflow.faults.serve.fault_route`; ``inject`` refuses it.
"""

from __future__ import annotations

from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import SingleAssignmentDisposable

from ..core.errors import TransportError
from .chunks import Reset
from .recipes import Chain, Fault, Stall

__all__ = ["RESET_MESSAGE", "inject"]

RESET_MESSAGE = "connection reset by peer (injected fault)"


def inject(*faults: Fault) -> Any:
    """A pipeable operator ``Observable[bytes] -> Observable[bytes]`` applying ``faults``."""
    if any(isinstance(f, Stall) for f in faults):
        raise TypeError("a Stall needs a source or a route that can wait: use "
                        "faulty_source() or fault_route(), not inject()")

    def operator(source: Observable[bytes]) -> Observable[bytes]:
        def subscribe(observer: abc.ObserverBase[bytes],
                      scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
            chain = Chain(faults)
            upstream = SingleAssignmentDisposable()
            done = False

            def emit(items: list[Any]) -> bool:
                nonlocal done
                for item in items:
                    if isinstance(item, Reset):
                        done = True
                        upstream.dispose()
                        observer.on_error(TransportError(RESET_MESSAGE))
                        return False
                    if isinstance(item, bytes):
                        observer.on_next(item)
                return True

            def finish() -> None:
                nonlocal done
                if emit(chain.close()) and not done:
                    done = True
                    observer.on_completed()

            def on_next(chunk: bytes) -> None:
                if done:
                    return
                if emit(chain.feed(chunk)) and chain.ended:
                    upstream.dispose()
                    finish()

            def on_error(error: Exception) -> None:
                nonlocal done
                if not done:
                    done = True
                    observer.on_error(error)

            def on_completed() -> None:
                if not done:
                    finish()

            upstream.disposable = source.subscribe(on_next, on_error, on_completed,
                                                   scheduler=scheduler)
            return upstream

        return Observable(subscribe)

    return operator
