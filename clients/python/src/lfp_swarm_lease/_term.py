"""A term won by a ``hold`` and the ``async with`` block it guards, whichever engine granted it:
a room of the elections API (:class:`Leadership`) or the Swarm lease through the bundled binary
(:class:`ControllerLeadership`). The deadline rule, the renewals and the cancellation of the
body are written here once; each engine says how to renew and how to resign."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Generic, TypeVar

from . import _timing
from ._backoff import Backoff
from ._errors import EndReason, LeadershipEndedError, LeaseError
from ._options import safe_jitter
from ._timeout import within


class TermLost(Exception):
    """Raised by :meth:`Term._renew_once` when the engine says the term is over for good (its
    ``__cause__`` is the engine's answer); any other exception is a failed renewal, retried
    until the deadline."""


class Term:
    """One term, alive until it ends; :attr:`cause` then says why. It renews the term in the
    background and cancels the body it guards before the term's safety deadline when renewals
    stop succeeding. Nothing it shows contains a secret of the term."""

    def __init__(self, *, fence: int, what: str, start: float, ttl: float, stop_before: float,
                 interval: float, body: asyncio.Task[object], logger: logging.Logger,
                 min_backoff: float, max_backoff: float, jitter: Callable[[], float]) -> None:
        """Starts the renewals and the deadline's timer of the term ``fence`` of ``what`` (e.g.
        ``"room X"``), whose winning request started at ``start`` (``loop.time()``) and runs
        ``ttl`` seconds."""
        self._loop = asyncio.get_running_loop()
        self.fence = fence
        """The term's fence: strictly increasing, never reused. Hand it to every resource the
        leader writes to, which must refuse a fence lower than one it saw."""
        self._what = what
        self._stop_before = stop_before
        self._interval = interval
        self._body = body
        self._logger = logger
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._jitter = jitter
        self._deadline = start + _timing.window(ttl)
        self._cause: LeadershipEndedError | None = None
        self._ended = asyncio.Event()
        self._exiting = False  # the block is being left: the body is no longer running
        self._cancelled_body = False
        self._last_failure: BaseException | None = None
        self._resigned: asyncio.Future[int] | None = None
        self._stop = self._loop.call_at(self._deadline - stop_before, self._on_deadline)
        self._renewing = self._loop.create_task(self._keep_renewed(start))

    # --- what each engine provides ---

    async def _renew_once(self) -> float:
        """Renews the term once and returns the TTL (seconds) it now runs for; raises
        :class:`TermLost` when the term is over, anything else when the renewal failed."""
        raise NotImplementedError

    async def _resign_once(self) -> int:
        """Ends the term at the engine; returns the fence that ended."""
        raise NotImplementedError

    # --- the term ---

    @property
    def deadline(self) -> float:
        """The safety deadline on the event loop's monotonic clock (``loop.time()``): the start
        of the last confirmed request + TTL − :func:`safety_margin`. Unless a renewal succeeds
        first, the term ends ``stop_before`` seconds before it."""
        return self._deadline

    @property
    def cause(self) -> LeadershipEndedError | None:
        """Why the term ended; ``None`` while it lasts."""
        return self._cause

    @property
    def ended(self) -> bool:
        """Whether the term has ended."""
        return self._cause is not None

    async def wait_ended(self) -> LeadershipEndedError:
        """Waits for the end of the term and returns its cause."""
        await self._ended.wait()
        assert self._cause is not None
        return self._cause

    async def resign(self) -> int:
        """Ends the term — renewals stop at once — and tells the engine, so that a follower
        takes over without waiting for the lease to expire; returns the fence that ended. After
        a loss there is nothing to resign: it returns 0 without a request. Only the first call
        does anything; later calls return its result. The body is not cancelled."""
        if self._resigned is None:
            self._resigned = asyncio.ensure_future(self._resign())
        return await asyncio.shield(self._resigned)

    def __repr__(self) -> str:
        state = self._cause.reason if self._cause else "held"
        left = self._deadline - self._loop.time()
        return (f"<{type(self).__name__} {self._what} fence={self.fence} {state}, deadline in "
                f"{left:.3f} s>")

    async def _resign(self) -> int:
        lost = self._cause is not None and self._cause.reason == "lost"
        self._end("resigned", "resign() was called")
        await self._stop_renewing()  # no renewal races the resignation
        if lost:
            return 0
        return await self._resign_once()

    async def _close(self) -> None:
        """Leaving the block: ends the term, resigns it unless lost; never raises but for a
        cancellation."""
        try:
            await self.resign()
        except LeaseError as e:
            self._logger.warning("lfp-swarm-lease: resigning term %d of %s failed: %s; the "
                                 "lease expires by itself", self.fence, self._what, e)
        await self._stop_renewing()

    async def _stop_renewing(self) -> None:
        if self._renewing is not asyncio.current_task():
            self._renewing.cancel()
            await asyncio.gather(self._renewing, return_exceptions=True)

    def _on_deadline(self) -> None:
        self._end("deadline", f"the safety deadline came without a successful renewal; the "
                  f"{self._what} may be taken over", self._last_failure)

    def _end(self, reason: EndReason, message: str, cause: BaseException | None = None) -> None:
        if self._cause is not None:
            return
        err = LeadershipEndedError(reason, message)
        err.__cause__ = cause
        self._cause = err
        self._stop.cancel()
        self._ended.set()
        if self._renewing is not asyncio.current_task():
            self._renewing.cancel()
        if reason != "resigned":
            self._logger.warning("lfp-swarm-lease: term %d of %s ended: %s", self.fence,
                                 self._what, f"{err}: {cause}" if cause else err)
            if not self._exiting and not self._body.done():
                self._cancelled_body = True
                self._body.cancel(msg=str(err))

    async def _keep_renewed(self, won: float) -> None:
        """Renews every interval (less up to a fifth at random) until the term ends, retrying
        failures with back-off until the deadline does.

        Renewals are timed from the start of the last confirmed request — the point the
        deadline is measured from — not from its answer: a slow engine then eats into the slack
        once, not twice."""
        log = self._logger
        loop = self._loop
        interval = self._interval

        def jittered() -> float:
            return interval - interval / 5 * safe_jitter(self._jitter)

        # Failed renewals are retried well within the interval: a few tries fit before the
        # deadline.
        backoff = Backoff(self._min_backoff,
                          max(self._min_backoff, min(self._max_backoff, interval / 4)),
                          self._jitter)
        wake = won + jittered()
        failing = False
        while True:
            await asyncio.sleep(max(0.0, wake - loop.time()))
            start = loop.time()
            # No attempt outlives the term: past its end, a success could not extend it.
            budget = self._deadline - self._stop_before - start
            try:
                if budget <= 0:
                    raise asyncio.TimeoutError
                ttl = await within(self._renew_once(), budget)
            except TermLost as e:
                self._end("lost", str(e), e.__cause__)
                return
            except (LeaseError, asyncio.TimeoutError) as e:
                failure: BaseException = e
            else:
                if self._cause is not None:
                    return  # a late success does not revive the term
                self._deadline = start + _timing.window(ttl)
                self._stop.cancel()
                self._stop = loop.call_at(self._deadline - self._stop_before, self._on_deadline)
                if failing:
                    log.info("lfp-swarm-lease: term %d of %s renewed after failures",
                             self.fence, self._what)
                failing = False
                self._last_failure = None
                backoff.reset()
                wake = start + jittered()
                continue
            if isinstance(failure, asyncio.TimeoutError):
                failure = LeaseError("the renewal got no answer before the term's end")
            self._last_failure = failure
            if not failing:
                log.warning("lfp-swarm-lease: renewing term %d of %s failed: %s; retrying "
                            "until the deadline (in %.3f s)", self.fence, self._what, failure,
                            self._deadline - loop.time())
            failing = True
            wake = loop.time() + backoff.next()


T = TypeVar("T", bound=Term)

#: Tasks started in the background (a term handed back) must be referenced until they end.
_background: set[asyncio.Task[object]] = set()


class TermHold(Generic[T]):
    """The async context manager of a ``hold``: entering wins a term (:meth:`_win`, each
    engine's campaign) and guards the block's body with it; leaving resigns it. A term that
    ends early cancels the body, and the block raises :class:`LeadershipEndedError`."""

    def __init__(self) -> None:
        self._term: T | None = None
        self._entered = False
        self._cancelling = 0

    async def _win(self, body: asyncio.Task[object]) -> T:
        """Campaigns until a term is won and returns it, guarding ``body``."""
        raise NotImplementedError

    async def __aenter__(self) -> T:
        if self._entered:
            raise RuntimeError("lfp-swarm-lease: a hold is entered once; call hold() again for "
                               "another term")
        self._entered = True
        body = asyncio.current_task()
        if body is None:
            raise RuntimeError("lfp-swarm-lease: hold needs to run in an asyncio task")
        term = await self._win(body)
        self._cancelling = _cancelling(body)
        self._term = term
        return term

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        term = self._term
        assert term is not None
        # Before any await: from here on nothing may cancel the task, which has left the body.
        term._exiting = True
        await term._close()
        if not term._cancelled_body:
            return
        more = _uncancel(term._body)
        # The cancellation was this term's (a body that caught it and returned is told too)
        # unless someone else cancelled the task as well: theirs goes on. Another exception of
        # the body goes on too.
        if more <= self._cancelling and exc_type in (None, asyncio.CancelledError):
            cause = term.cause
            assert cause is not None
            raise cause


def in_background(coro: Coroutine[Any, Any, object]) -> None:
    """Runs ``coro`` to its end in the background (a term handed back); its failure is not
    worth a warning."""
    task: asyncio.Task[object] = asyncio.ensure_future(coro)
    _background.add(task)

    def done(t: asyncio.Task[object]) -> None:
        _background.discard(t)
        if not t.cancelled():
            t.exception()  # retrieved: a failed hand-back is not worth a warning

    task.add_done_callback(done)


def _cancelling(task: asyncio.Task[Any]) -> int:
    if sys.version_info >= (3, 11):
        return task.cancelling()
    return 0


def _uncancel(task: asyncio.Task[Any]) -> int:
    # 3.11+ counts cancellation requests; the one this module made is taken back, so that a
    # TaskGroup or timeout around the block does not see it as theirs.
    if sys.version_info >= (3, 11):
        return task.uncancel()
    return 0
