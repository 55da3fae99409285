"""A custom operator in a dozen lines: whole sentences out of text fragments.

State lives inside ``subscribe``, so every subscription gets its own buffer -- the
rule every streamflow operator follows. Runs on an inline body, no network.
"""

import re
from collections.abc import Callable

from _body import BODY
from reactivex import Observable

import streamflow
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sources import from_bytes


def sentences() -> Callable[[Observable], Observable]:
    """UniEvents -> the answer's sentences, each as soon as it is complete."""
    def operator(source: Observable) -> Observable:
        def subscribe(observer, scheduler=None):
            pending = [""]                                       # per-subscription state
            def on_next(event):
                item = event.item
                if item is not None and item.type == "text.delta":
                    *whole, pending[0] = re.split(r"(?<=[.!?])\s+", pending[0] + item.text)
                    for sentence in whole:
                        observer.on_next(sentence)
            def on_completed():
                if pending[0].strip():
                    observer.on_next(pending[0])
                observer.on_completed()
            return source.subscribe(on_next, observer.on_error, on_completed, scheduler=scheduler)
        return Observable(subscribe)
    return operator


if __name__ == "__main__":
    events = from_bytes(BODY, chunk_size=7).pipe(pipeline("anthropic"))
    events.pipe(sentences()).subscribe(lambda s: print(f"sentence: {s!r}"))
    print("message text:", streamflow.run_sync(events).text)
