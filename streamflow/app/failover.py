"""Answers that survive a failing provider: retries, a chain of endpoints, continuation.

::

    chain = Failover(["anthropic:claude-sonnet-4-5",
                      OpenAIChatProvider(base_url="http://127.0.0.1:8080/v1", model="smol",
                                         api_key="-")],
                     first_chunk_timeout=15, stall_timeout=30)
    message = await streamflow.run(chain.source("Explain SSE"), RenderSink())
    agent = Agent(chain, tools)                       # every turn through the chain

A :class:`Failover` asks its endpoints, in order, for one answer. Before the first
byte, a failure is retried -- the same endpoint again after a backoff (the server's
``Retry-After`` honoured: an endpoint that asked for more than ``max_delay`` is left
for the next), then the next endpoint -- and an endpoint that keeps failing cools down
for every request (:class:`Breaker`). A request that gets no first chunk within
``first_chunk_timeout``, or no chunk for ``stall_timeout`` once it streams, has failed
too. After output -- a cut body, a stall, an overloaded or 5xx error in-band -- the
answer is **continued, not restarted**: the next attempt asks with the partial answer
as the assistant's prefix and its events are spliced into the same stream
(:mod:`streamflow.core.continuation`: one stop, nothing duplicated or missing, a cut
tool call or thinking block asked for again whole, usage summed, each attempt in the
stop's :data:`~streamflow.core.delivery.DELIVERY`). A failure with nothing left to try
is raised as the typed error it is, with the partial answer on it.

Which failure goes where:

* retried at the same endpoint (``tries`` times), then the next: a cut or dropped
  body, a timeout, a retryable HTTP status (408, 409, 425, 429, 5xx, 529) or in-band
  error (overloaded, rate limit, server error);
* the next endpoint only: 401, 403, 404 (this endpoint's key or model), a malformed
  stream, an in-band error that is not retryable;
* raised at once: any other 4xx (the request itself), a limit passed, a cancellation,
  a tool call's bad arguments -- and a bug of ours, as itself.

Every attempt is one request through the endpoint's provider (its dialect's request
side, its model, key and options), sent by ``send`` (:func:`~streamflow.app.agent.
http_sender`; without one, a client of the answer's own) and read by THE chunk reader
and THE decode loop, in the task of whoever drives it: :class:`FailoverSource`'s pump
task under ``run()``/``stream()``/``Agent``/the web responses, the response's own task
in the gateway (:meth:`Failover.relay`, an async generator that yields after each
chunk).
"""

from __future__ import annotations

import copy
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio
import anyio.lowlevel
import httpx
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from ..core.continuation import INSTRUCTION, Continuation
from ..core.errors import (
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    NoScopeError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    StreamTimeoutError,
    TransportError,
)
from ..core.events import UniEvent
from ..core.limits import DEFAULT_LIMITS, Limits
from ..core.requests import ChatRequest, Turn
from ..reactive._chunk_reader import ChunkReader
from ..reactive._scope import Scope, current_scope
from ..reactive._source import Source
from ..reactive.operators.on_error import exponential_backoff
from ..reactive.sources.http import from_httpx
from ..wire.decoder import StreamDecoder
from ..wire.dialects import get_request
from ..wire.dialects.request_base import HTTPRequest
from ..wire.redaction import scrub_error, secrets_in
from .providers import Provider, provider_for
from .tools import Tool

__all__ = ["Breaker", "Endpoint", "Failover", "FailoverSource", "SendFn", "failure_kind",
           "http_sender", "own_client"]

SendFn = Callable[[HTTPRequest], Source]
"""Sends one request; returns the (cold) source of its response body."""

TIMEOUT = httpx.Timeout(30.0, read=None)
"""A run's own client: 30 s to connect, write and pool; reads bounded by ``Limits``."""


def own_client() -> httpx.AsyncClient:
    """The HTTP client a run opens for itself when the caller gave none (close it)."""
    return httpx.AsyncClient(timeout=TIMEOUT)


def http_sender(client: httpx.AsyncClient, *, limits: Limits | None = None) -> SendFn:
    """A ``send`` function posting each request with ``client`` (status checked, streamed):
    the one way an Agent's turn and a failover chain's attempt go out."""
    def send(request: HTTPRequest) -> Source:
        def build() -> httpx.Request:
            return client.build_request(request.method, request.url, headers=request.headers,
                                        content=request.body)

        return from_httpx(client, build, limits=limits)

    return send




@dataclass(eq=False)
class Endpoint:
    """One place an answer can come from: a dialect and the way to write its request.

    ``build`` turns the neutral request into the HTTP request (a :class:`Provider`'s
    :meth:`~Provider.build`: its model, key and options); ``name`` labels the endpoint
    in the delivery record, the logs and the breaker (endpoints of one name share a
    circuit); ``prefill`` whether its server continues a final assistant turn
    (``None``: its dialect's default, :attr:`RequestSide.prefill`: Anthropic yes,
    others no -- llama.cpp, DeepSeek and Mistral do: say ``prefill=True``);
    ``limits`` this endpoint's read limits (the chain's otherwise); ``send`` how to
    send its requests (the chain's otherwise).
    """

    dialect: str
    build: Callable[[ChatRequest], HTTPRequest]
    name: str = ""
    prefill: bool | None = None
    limits: Limits | None = None
    send: SendFn | None = None
    provider: Provider | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.name = self.name or self.dialect

    @classmethod
    def of(cls, target: Endpoint | Provider | str, *, name: str | None = None,
           prefill: bool | None = None, limits: Limits | None = None,
           send: SendFn | None = None, **options: Any) -> Endpoint:
        """``target`` as an endpoint: an endpoint as it is, a :class:`Provider`, or a model
        string (``"openai:gpt-4.1-mini"``, :func:`~streamflow.app.providers.provider_for`;
        ``options`` are the provider's fields). ``name`` defaults to
        ``provider:model@base_url``; ``prefill``, ``limits`` and ``send`` as the class
        says (``Endpoint.of(OpenAIChatProvider(base_url=llama_url), prefill=True)``)."""
        if isinstance(target, Endpoint):
            return target
        provider = provider_for(target, **options) if isinstance(target, str) else target
        return cls(provider.dialect, provider.build,
                   name=name or f"{provider.name}:{provider.model}@{provider.base_url}",
                   prefill=prefill, limits=limits, send=send, provider=provider)

    @property
    def stream_dialect(self) -> str:
        """The dialect its answers are decoded with."""
        return get_request(self.dialect).stream_dialect

    def prefills(self) -> bool:
        """Whether a cut answer goes to this endpoint as its final assistant turn."""
        return get_request(self.dialect).prefill if self.prefill is None else self.prefill


class Breaker:
    """One circuit per endpoint name, shared by every request of a chain.

    ``failures`` failures in a row open an endpoint's circuit for ``cooldown`` seconds
    (a server's ``Retry-After`` opens it until then at once); while open the endpoint
    is passed over. After the cooldown one request tries it (half open): a success
    closes the circuit, a failure opens it again. ``clock`` is injectable (tests).
    """

    def __init__(self, failures: int = 3, cooldown: float = 30.0, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if failures < 1:
            raise ValueError("failures must be at least 1")
        self.failures = failures
        self.cooldown = cooldown
        self.clock = clock
        self._failed: dict[str, int] = {}
        self._until: dict[str, float] = {}

    def wait(self, name: str) -> float:
        """Seconds until endpoint ``name`` may be tried (0: now)."""
        return max(0.0, self._until.get(name, 0.0) - self.clock())

    def state(self, name: str) -> Literal["closed", "open", "half-open"]:
        """``closed`` (tried as usual), ``open`` (passed over) or ``half-open`` (its
        cooldown is over; the next result decides)."""
        if name not in self._until:
            return "closed"
        return "open" if self.wait(name) > 0 else "half-open"

    def failed(self, name: str, retry_after: float | None = None) -> None:
        """An attempt at ``name`` failed (``retry_after``: the seconds the server asked for)."""
        count = self._failed.get(name, 0) + 1
        self._failed[name] = count
        now = self.clock()
        until = self._until.get(name, 0.0)
        if count >= self.failures or name in self._until:  # a half-open trial failed too
            until = max(until, now + self.cooldown)
        if retry_after is not None:
            until = max(until, now + retry_after)
        if until > now:
            self._until[name] = until

    def succeeded(self, name: str) -> None:
        """An attempt at ``name`` answered: its circuit closes."""
        self._failed.pop(name, None)
        self._until.pop(name, None)


Kind = Literal["retry", "next"]


def failure_kind(error: Exception) -> Kind | None:
    """Where a failed attempt's ``error`` sends the chain (see the module doc): ``"retry"``
    (the same endpoint may answer next time), ``"next"`` (another endpoint only), or
    ``None`` (no attempt would do better: raise it)."""
    if isinstance(error, HTTPStatusError):
        if error.retryable:
            return "retry"
        return "next" if error.status in (401, 403, 404) else None
    if isinstance(error, ProviderError):  # in-band
        return "retry" if error.retryable else "next"
    if isinstance(error, (IncompleteStreamError, TransportError, StreamTimeoutError)):
        return "retry"
    if isinstance(error, (ProtocolError, FramingError)):
        return "next"
    return None


class Failover:
    """A chain of endpoints answering one request (see the module doc).

    ``endpoints``: :class:`Endpoint` s, providers or model strings, tried in order.
    ``tries`` is the attempts one endpoint gets before the next (``max_attempts`` the
    attempts in all, default ``tries`` times the endpoints); ``backoff(n)`` the wait
    before an endpoint's try ``n + 1`` (raised to the server's ``Retry-After``), and a
    wait over ``max_delay`` is not waited: the next endpoint is tried instead. In a
    chain of two or more, an endpoint whose circuit is open is passed over; when every
    one is, the answer fails at once (``HTTPStatusError`` 503, ``retry_after`` the
    soonest free): a chain of one always tries its endpoint.
    ``first_chunk_timeout`` / ``stall_timeout`` (seconds) bound the wait for the first
    chunk and between chunks (the endpoint's limits otherwise). ``breaker`` keeps each
    endpoint's circuit (default ``Breaker()``; share one between chains that share
    endpoints). ``continue_after_output=False`` raises a failure after output instead
    of continuing the answer. ``send`` sends each attempt (default: a client of each
    answer's own). ``sleep`` and ``clock`` are injectable (tests).
    """

    def __init__(self, endpoints: Sequence[Endpoint | Provider | str], *, tries: int = 2,
                 max_attempts: int | None = None,
                 backoff: Callable[[int], float] | None = None, max_delay: float = 30.0,
                 first_chunk_timeout: float | None = None, stall_timeout: float | None = None,
                 breaker: Breaker | None = None, continue_after_output: bool = True,
                 instruction: str = INSTRUCTION, limits: Limits | None = None,
                 send: SendFn | None = None,
                 sleep: Callable[[float], Awaitable[Any]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not endpoints:
            raise ValueError("a failover chain needs at least one endpoint")
        if tries < 1:
            raise ValueError("tries must be at least 1")
        self.endpoints = [Endpoint.of(e) for e in endpoints]
        self.tries = tries
        self._max_given = max_attempts is not None
        self.max_attempts = max_attempts or tries * len(self.endpoints)
        self.backoff = backoff or exponential_backoff()
        self.max_delay = max_delay
        self.first_chunk_timeout = first_chunk_timeout
        self.stall_timeout = stall_timeout
        self.breaker = breaker or Breaker(clock=clock)
        self.continue_after_output = continue_after_output
        self.instruction = instruction
        self.limits = limits
        self.send = send
        self.sleep = sleep or anyio.sleep
        self.clock = clock

    @property
    def can_continue(self) -> bool:
        """Whether an answer may go on after a failure (more than one attempt, and
        ``continue_after_output``): its consumers that cannot take back what they got are
        then given it through a Holdback."""
        return self.continue_after_output and self.max_attempts > 1

    def bound(self, endpoints: Sequence[Endpoint]) -> Failover:
        """This chain with ``endpoints`` in place of its own (the gateway's per-request
        endpoints: each writes its request with the client's headers), sharing its
        settings and its breaker (endpoints of one name share a circuit)."""
        chain = copy.copy(self)
        chain.endpoints = list(endpoints)
        if not self._max_given:
            chain.max_attempts = self.tries * len(chain.endpoints)
        return chain

    @property
    def primary(self) -> Endpoint:
        """The first endpoint (an Agent writes its requests with its provider)."""
        return self.endpoints[0]

    def source(self, prompt: str | Sequence[Turn] | ChatRequest, *, tools: Iterable[Tool] = (),
               send: SendFn | None = None) -> FailoverSource:
        """A source of the answer to ``prompt`` -- a user text, a conversation of neutral
        :class:`~streamflow.core.requests.Turn` s (written with the primary endpoint's
        provider and options, offering ``tools``), or a whole neutral ``ChatRequest`` --
        for ``run()``, ``stream()`` and the web responses; ``send`` overrides the chain's."""
        if isinstance(prompt, ChatRequest):
            request = prompt
        else:
            provider = self.primary.provider
            if provider is None:
                raise TypeError("the first endpoint has no provider to write a conversation "
                                "with: pass a ChatRequest")
            turns = [Turn.user(prompt)] if isinstance(prompt, str) else list(prompt)
            request = provider.chat_request(turns, tools)
        return FailoverSource(self, request, send or self.send)

    def limits_for(self, endpoint: Endpoint) -> Limits:
        """The read limits of an attempt at ``endpoint``."""
        limits = endpoint.limits or self.limits or DEFAULT_LIMITS
        changes: dict[str, Any] = {}
        if self.stall_timeout is not None:
            changes["idle_timeout"] = self.stall_timeout
        if self.first_chunk_timeout is not None:
            changes["first_chunk_timeout"] = self.first_chunk_timeout
        return replace(limits, **changes) if changes else limits

    def _pick(self, start: int) -> int | None:
        """The first endpoint from ``start`` on whose circuit lets it be tried now (in a
        chain of one, the endpoint: there is nowhere else to go)."""
        if len(self.endpoints) == 1:
            return 0 if start == 0 else None
        for index in range(start, len(self.endpoints)):
            if self.breaker.wait(self.endpoints[index].name) == 0:
                return index
        return None

    def first(self) -> int:
        """The endpoint of an answer's first attempt: the first whose circuit is closed;
        none -- every endpoint failed lately -- fails fast: ``HTTPStatusError(503)``
        with the soonest one's ``retry_after``."""
        picked = self._pick(0)
        if picked is not None:
            return picked
        soonest = min(self.breaker.wait(e.name) for e in self.endpoints)
        raise HTTPStatusError(
            f"every endpoint of the failover chain is cooling down after failures "
            f"(the first is free again in {soonest:.1f}s)", status=503,
            headers={"retry-after": f"{max(1, round(soonest))}"}, type="circuit_open")

    def after(self, index: int, tries: int, error: Exception, has_output: bool,
              attempts: int) -> tuple[int, int, float] | None:
        """Where attempt ``attempts + 1`` goes after endpoint ``index`` failed its try
        number ``tries`` with ``error``: ``(index, tries there, wait)``; ``None``: give up."""
        kind = failure_kind(error)
        if kind is None:
            return None
        endpoint = self.endpoints[index]
        retry_after = getattr(error, "retry_after", None)
        if len(self.endpoints) > 1:  # a circuit matters where there is another way
            self.breaker.failed(endpoint.name, retry_after)
        if attempts >= self.max_attempts or (has_output and not self.continue_after_output):
            return None
        if kind == "retry" and tries < self.tries:
            wait = max(self.backoff(tries), float(retry_after or 0.0))
            if wait <= self.max_delay:
                return index, tries + 1, wait
        picked = self._pick(index + 1)
        return None if picked is None else (picked, 1, 0.0)

    async def relay(self, splice: Continuation, send: SendFn | None = None,
                    sent: Callable[[frozenset[str]], None] | None = None, *,
                    paced: Scope | None = None) -> AsyncIterator[None]:
        """Drive one answer through the chain in this task: each attempt's request sent
        with its endpoint's ``send`` (else ``send``), read by THE chunk reader, decoded by
        THE decode loop into ``splice`` (which emits the answer); yields after each
        chunk, or, ``paced`` by a scope, paces itself between chunks as a source's pump
        does (:meth:`Scope.pace`) and yields nothing. Ends after the stop event; raises
        the failure the chain does not go past, with the answer's partial. ``sent`` is
        told the credential values the attempts sent so far (for scrubbing)."""
        try:
            index, wait = self.first(), 0.0
        except HTTPStatusError as exc:
            raise exc.attach(splice.partial) from None
        tries, attempts = 1, 1
        secrets: frozenset[str] = frozenset()
        while True:
            endpoint = self.endpoints[index]
            if wait > 0:
                await self.sleep(wait)
            limits = self.limits_for(endpoint)
            decoder = StreamDecoder(endpoint.stream_dialect, limits=limits)
            splice.begin(endpoint.name, endpoint.dialect, decoder, wait)
            decoder.emit = splice.receiver
            error: StreamflowError | None = None
            try:
                request = endpoint.build(splice.next_request(endpoint.prefills()))
                found = secrets_in(request.headers, request.url)
                if found - secrets:
                    secrets |= found
                    if sent is not None:
                        sent(secrets)
                sender = endpoint.send or send
                if sender is None:
                    raise TypeError(f"endpoint {endpoint.name!r} has no way to send: give "
                                    "the chain or the endpoint a send function")
                source = sender(request)
                if isinstance(source, Source) and source.limits is None:
                    source.limits = limits  # the attempt's: its headers' wait is the stall's
                reader = ChunkReader(limits, source.map_error)
                try:
                    async with AsyncExitStack() as stack:
                        chunks = await reader.open(stack, source.open())
                        while (chunk := await reader.next(chunks)) is not None:
                            if chunk:
                                decoder.feed(chunk)
                                splice.chunk_done()
                            if paced is None:
                                yield
                            else:
                                await paced.pace(reader)
                            if decoder.stopped:
                                break
                        if not decoder.stopped:
                            decoder.close()
                finally:
                    reader.close()
            except StreamflowError as exc:
                error = exc
            if error is None or decoder.stopped:
                self.breaker.succeeded(endpoint.name)  # (what failed after stop is ignored)
                return
            scrub_error(error, secrets)
            usage = decoder.partial.usage
            nxt = self.after(index, tries, error, splice.has_output, attempts)
            if nxt is None:
                raise splice.fail(error, usage)
            index, tries, wait = nxt
            attempts += 1
            splice.cut(error, usage, attempt=attempts, delay=wait,
                       endpoint=self.endpoints[index].name)


class FailoverSource(Observable[Any]):
    """A cold source of one answer's UniEvents through a :class:`Failover`: each
    subscription asks for the answer once (attempts included) in a pump task of the
    enclosing scope (``run()``, ``stream()``, ``async with streamflow.scope()``).

    ``continues`` tells ``run()`` the stream may drop what it gave (a continuation's
    notice), so sinks that cannot take that back get it through a
    :class:`~streamflow.core.continuation.Holdback`; ``continuation`` is the last
    subscription's splice (``run()`` reads its message instead of assembling a second
    one); ``secrets`` the credential values its attempts sent. ``earlier`` is an answer
    begun elsewhere: its events so far (which its readers have) and why it stopped; the
    answer goes on from them (:meth:`Continuation.take_over`: a resumable stream whose
    producer died, continued by another instance).
    """

    gives_events = True  # a run decodes nothing: the relay does, attempt by attempt

    @property
    def continues(self) -> bool:
        """Whether the answer may be continued after a failure (:attr:`Failover.can_continue`)."""
        return self.failover.can_continue

    def __init__(self, failover: Failover, request: ChatRequest,
                 send: SendFn | None = None, *,
                 earlier: tuple[list[UniEvent], Exception] | None = None) -> None:
        super().__init__()
        self.failover = failover
        self.request = request
        self.send = send
        self.earlier = earlier
        self.secrets: frozenset[str] = frozenset()
        self.continuation: Continuation | None = None

    def _subscribe_core(self, observer: abc.ObserverBase[Any],
                        scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        owner = current_scope()
        if owner is None:
            observer.on_error(NoScopeError(
                "FailoverSource is asynchronous: subscribe it inside `await streamflow.run(...)` "
                "or `async with streamflow.scope():`"))
            return Disposable()
        splice = Continuation(self.request, observer.on_next, clock=self.failover.clock,
                              instruction=self.failover.instruction)
        if self.earlier is not None:  # an answer begun by a producer that stopped
            splice.take_over(*self.earlier, endpoint=self.failover.primary.name)
        self.continuation = splice
        return owner.spawn(lambda cancel: self._pump(splice, observer, cancel, owner),
                           "streamflow-pump:FailoverSource")

    def subscribe_guarded(self, observer: Any,
                          scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        """Subscribe an observer that guards itself (``run()``'s fan-out: it ignores what
        comes after its end), with no reactivex observer wrapped around it: the answer's
        events go straight to it."""
        return self._subscribe_core(observer, scheduler)

    def note_secrets(self, secrets: frozenset[str]) -> None:
        """The credential values the answer's attempts sent so far (a relay tells them)."""
        self.secrets = secrets

    async def _pump(self, splice: Continuation, observer: abc.ObserverBase[Any],
                    cancel: anyio.CancelScope, owner: Scope) -> None:
        """The answer's task: the relay, paced by ``owner`` (``cancel``, the task's cancel
        scope, stops it at its next pause)."""
        error: Exception | None = None
        try:
            async with self._sender() as send:
                async for _ in self.failover.relay(splice, send, self.note_secrets,
                                                   paced=owner):
                    pass  # (it yields nothing: paced by the scope)
        except Exception as exc:
            error = exc
        owner.end(observer, error, cancel)

    @asynccontextmanager
    async def _sender(self) -> AsyncIterator[SendFn]:
        """The source's ``send``; without one, a client of this answer's own, made when
        an endpoint without a ``send`` of its own is first asked (and closed after)."""
        if self.send is not None:
            yield self.send
            return
        async with AsyncExitStack() as stack:
            made: list[SendFn] = []

            def send(request: HTTPRequest) -> Source:
                if not made:
                    client = own_client()
                    stack.push_async_callback(client.aclose)
                    made.append(http_sender(client))
                return made[0](request)

            yield send
