"""One watch of a server-sent-events endpoint whose every connection starts with the complete
current state: the observer on ``GET /v1/events``, ``watch_room`` and ``hold``'s follower on
``GET /elections/{id}/watch``. It owns the connections, back-off, timeouts and
de-duplication; :class:`StreamSpec` says where the two endpoints' policies differ."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import SplitResult

from . import _http
from ._backoff import Backoff
from ._errors import InitialTimeoutError, LeaseApiError, LeaseError, ProtocolError
from ._options import Options
from ._sse import SSEParser
from ._timeout import within

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class StreamSpec(Generic[T]):
    """What to read, whom to hand it, and where the two endpoints' policies differ."""

    url: SplitResult
    options: Options
    initial_timeout: float | None
    """Bounds the wait for the first state; ``None``: no bound."""
    server: str
    """What should answer at ``url``, for the error of an answer that is no event stream."""
    state_events: frozenset[str]
    """The event types that carry a state; other types, of later server versions, are
    skipped."""
    decode: Callable[[object, str], T]
    """The state of an event's decoded JSON data; raises :class:`ProtocolError` naming the
    event (its second argument) when the data is not the contract's object."""
    same: Callable[[T, T], bool]
    """Whether the second state shows what the first showed: a replay the consumer already
    has."""
    end_on_permanent_answer: bool
    """Raise an answer that retrying cannot change instead of retrying it."""
    cap_retry_after: bool
    """Bound a server's Retry-After by the maximum back-off."""
    reconnect_level: int
    reconnect_message: str


class _Permanent(Exception):
    """A failure that ends the watch: retrying cannot change it."""

    def __init__(self, error: LeaseApiError) -> None:
        self.error = error


class _Cut(Exception):
    """The client cut the connection: nothing arrived within the idle or initial timeout."""


_IDLE = "nothing received within the idle timeout"
_INITIAL = "the initial timeout passed"


async def watch_stream(spec: StreamSpec[T]) -> AsyncGenerator[T, None]:
    """Yields each state different from the one before it.

    Before the first state it raises :class:`InitialTimeoutError` (``__cause__``: the last
    failure) when the initial timeout passes; after it, it reconnects forever. Closing the
    generator (``aclose``) closes the open connection.
    """
    opts = spec.options
    loop = asyncio.get_running_loop()
    log = opts.logger
    what = f"GET {_http.show(spec.url)}"
    initial_deadline = (loop.time() + spec.initial_timeout if spec.initial_timeout is not None
                        else math.inf)
    backoff = Backoff(opts.min_backoff, opts.max_backoff, opts.jitter)
    started = False
    last: T | None = None
    last_error: BaseException | None = None

    def initial_timeout(cause: BaseException | None) -> InitialTimeoutError:
        err = InitialTimeoutError(spec.initial_timeout or 0.0, cause)
        err.__cause__ = cause
        return err

    while True:
        phase = "no response"
        cut: str | None = None
        delivered = False
        failure: BaseException

        async def bounded(step: Awaitable[R], discard: Callable[[R], object] | None = None,
                          ) -> R:
            """Awaits one step of the connection within the idle timeout and, before the
            first state, the initial deadline; ``discard`` closes what a step cancelled as it
            finished had opened."""
            nonlocal cut
            limits = []
            if opts.idle_timeout > 0:
                limits.append((opts.idle_timeout, _IDLE))
            if not started and initial_deadline < math.inf:
                limits.append((max(0.0, initial_deadline - loop.time()), _INITIAL))
            if not limits:
                return await step
            timeout, why = min(limits)
            try:
                return await within(step, timeout, discard=discard)
            except asyncio.TimeoutError:
                cut = why
                raise _Cut(f"{what}: {phase} ({why})") from None

        response: _http.Response | None = None
        try:
            try:
                opened: _http.Response = await bounded(_http.request(
                    spec.url, "GET", what=what, ssl_context=opts.ssl_context,
                    headers={"Accept": "text/event-stream", "Cache-Control": "no-cache",
                             "User-Agent": _http.user_agent(), **opts.headers}),
                    _http.Response.close)
                response = opened
                if response.status != 200:
                    prefix = await bounded(response.read_prefix(64 << 10))
                    error = LeaseApiError.from_answer(response.status, response.reason,
                                                      response.headers, prefix)
                    if spec.end_on_permanent_answer and not error.temporary:
                        raise _Permanent(error)
                    raise error
                if response.media_type != "text/event-stream":
                    raise ProtocolError(
                        f"{what}: content type {response.media_type!r}, want text/event-stream "
                        f"(is this {spec.server}?)")
                phase = "connected, but no state event"
                parser = SSEParser()
                while True:
                    chunk = await bounded(response.read_chunk())
                    if not chunk:
                        raise ProtocolError(f"{what}: the server ended the stream")
                    try:
                        events = parser.feed(chunk)
                    except ProtocolError as e:
                        raise ProtocolError(f"{what}: {e}") from None
                    if parser.retry is not None:
                        backoff.raise_floor(parser.retry)
                    for event in events:
                        if event.name not in spec.state_events:
                            continue  # an event type of a later server version
                        # Not the contract's object: the stream cannot be trusted from here
                        # on, and nothing of it reaches the consumer.
                        where = f"{what}: event {event.name!r}"
                        try:
                            data = json.loads(event.data)
                        except (ValueError, RecursionError):
                            raise ProtocolError(f"{where}: data is not JSON") from None
                        state = spec.decode(data, where)
                        delivered = True
                        phase = "no data"
                        if not started:
                            started = True
                        elif last is not None and spec.same(last, state):
                            continue  # a replay of what the consumer already has
                        last = state
                        yield state
            finally:
                if response is not None:
                    response.close()
        except _Permanent as p:
            raise p.error from None
        except (LeaseError, OSError, _Cut) as e:
            failure = e

        # An attempt cut short by the initial deadline says less than a failure before it.
        if last_error is None or cut != _INITIAL:
            last_error = failure
        if delivered:
            backoff.reset()
        if not started and loop.time() >= initial_deadline:
            raise initial_timeout(last_error)
        delay = backoff.next()
        if isinstance(failure, LeaseApiError) and failure.retry_after > delay:
            delay = failure.retry_after  # the server knows when it will have room
            if spec.cap_retry_after:
                delay = min(delay, opts.max_backoff)
        log.log(spec.reconnect_level, "%s: %s; reconnecting in %.3f s", spec.reconnect_message,
                failure, delay)
        # Before the first state the wait also ends at the initial deadline.
        if not started:
            delay = min(delay, max(0.0, initial_deadline - loop.time()))
        await asyncio.sleep(delay)
        if not started and loop.time() >= initial_deadline:
            raise initial_timeout(last_error)
