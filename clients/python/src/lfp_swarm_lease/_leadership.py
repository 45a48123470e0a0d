"""Leadership: one term won by ``hold``, kept renewed in the background; it cancels the body it
guards — before the term's safety deadline — when renewals stop succeeding."""

from __future__ import annotations

import asyncio

from . import _timing
from ._backoff import Backoff
from ._calls import RoomCalls
from ._errors import EndReason, LeadershipEndedError, LeaseApiError, LeaseError
from ._models import CampaignResult, ElectionLeader
from ._options import safe_jitter
from ._token import LeaderToken


class Leadership:
    """One term won by :class:`Hold`, alive until it ends; :attr:`cause` then says why. Nothing
    it shows contains the token."""

    def __init__(self, client: RoomCalls, room_id: str, won: CampaignResult, *, start: float,
                 ttl: int, stop_before: float, interval: float, body: asyncio.Task[object]) -> None:
        """Use :meth:`LeaseClient.hold`: this starts the renewals and the deadline's timer of
        the term ``won``, whose winning request started at ``start`` (``loop.time()``)."""
        assert won.leader_token is not None
        self._client = client
        self._loop = asyncio.get_running_loop()
        self.room_id = room_id
        """The room the term is of."""
        self.fence = won.leader.term
        """The term's fence — the number the elections API calls the term (``leader.term``):
        strictly increasing within the room, never reused. Hand it to every resource the leader
        writes to, which must refuse a fence lower than one it saw."""
        self._token: LeaderToken = won.leader_token
        self._leader = won.leader
        self._ttl = ttl
        self._stop_before = stop_before
        self._interval = interval
        self._body = body
        self._deadline = start + _timing.window(ttl)
        self._cause: LeadershipEndedError | None = None
        self._ended = asyncio.Event()
        self._exiting = False  # the block is being left: the body is no longer running
        self._cancelled_body = False
        self._last_failure: BaseException | None = None
        self._resigned: asyncio.Future[int] | None = None
        self._stop = self._loop.call_at(self._deadline - stop_before, self._on_deadline)
        self._renewing = self._loop.create_task(self._keep_renewed(start))

    @property
    def leader(self) -> ElectionLeader:
        """The term as the server last answered it (the winning campaign, then each renewal)."""
        return self._leader

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
        """Ends the term — renewals stop at once — and tells the server, so that a follower wins
        the room without waiting for the lease to expire; returns the term that ended. After a
        loss there is nothing to resign: it returns 0 without a request. Only the first call
        sends anything; later calls return its result. The body is not cancelled."""
        if self._resigned is None:
            self._resigned = asyncio.ensure_future(self._resign())
        return await asyncio.shield(self._resigned)

    def __repr__(self) -> str:
        state = self._cause.reason if self._cause else "held"
        left = self._deadline - self._loop.time()
        return (f"<Leadership room={self.room_id} term={self.fence} {state}, deadline in "
                f"{left:.3f} s>")

    async def _resign(self) -> int:
        lost = self._cause is not None and self._cause.reason == "lost"
        self._end("resigned", "resign() was called")
        await self._stop_renewing()  # no renewal races the resignation
        if lost:
            return 0
        return (await self._client.resign(self.room_id, self._token)).previous_term

    async def _close(self) -> None:
        """Leaving the block: ends the term, resigns it unless lost; never raises but for a
        cancellation."""
        try:
            await self.resign()
        except LeaseError as e:
            self._client.options.logger.warning(
                "lfp-swarm-lease: resigning term %d of room %s failed: %s; the lease expires by "
                "itself", self.fence, self.room_id, e)
        await self._stop_renewing()

    async def _stop_renewing(self) -> None:
        if self._renewing is not asyncio.current_task():
            self._renewing.cancel()
            await asyncio.gather(self._renewing, return_exceptions=True)

    def _on_deadline(self) -> None:
        self._end("deadline", "the safety deadline came without a successful renewal; the room "
                  "may be taken over", self._last_failure)

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
            self._client.options.logger.warning(
                "lfp-swarm-lease: term %d of room %s ended: %s", self.fence, self.room_id,
                f"{err}: {cause}" if cause else err)
            if not self._exiting and not self._body.done():
                self._cancelled_body = True
                self._body.cancel(msg=str(err))

    def _renewed(self, start: float, leader: ElectionLeader) -> bool:
        """Moves the deadline after a renewal that started at ``start``; False when the term had
        already ended (a late success does not revive it)."""
        if self._cause is not None:
            return False
        self._leader = leader
        self._deadline = start + _timing.window(self._ttl)
        self._stop.cancel()
        self._stop = self._loop.call_at(self._deadline - self._stop_before, self._on_deadline)
        return True

    async def _keep_renewed(self, won: float) -> None:
        """Renews every interval (less up to a fifth at random) until the term ends, retrying
        failures with back-off until the deadline does.

        Renewals are timed from the start of the last confirmed request — the point the
        deadline is measured from — not from its answer: a slow server then eats into the slack
        once, not twice."""
        opts = self._client.options
        log = opts.logger
        loop = self._loop
        interval = self._interval

        def jittered() -> float:
            return interval - interval / 5 * safe_jitter(opts.jitter)

        # Failed renewals are retried well within the interval: a few tries fit before the
        # deadline.
        backoff = Backoff(opts.min_backoff,
                          max(opts.min_backoff, min(opts.max_backoff, interval / 4)), opts.jitter)
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
                result = await asyncio.wait_for(
                    self._client.renew(self.room_id, self._token, self._ttl), budget)
            except LeaseApiError as e:
                if e.lease_not_current or not e.temporary:
                    self._end("lost", "the server refused the renewal", e)
                    return
                failure: BaseException = e
            except (LeaseError, asyncio.TimeoutError) as e:
                failure = e
            else:
                if not result.is_leader or result.leader.term != self.fence:
                    # A renewal always answers leader with the same term; anything else is not
                    # this term.
                    self._end("lost", f"the renewal answered {result.status} with term "
                              f"{result.leader.term}")
                    return
                if not self._renewed(start, result.leader):
                    return
                if failing:
                    log.info("lfp-swarm-lease: term %d of room %s renewed after failures",
                             self.fence, self.room_id)
                failing = False
                self._last_failure = None
                backoff.reset()
                wake = start + jittered()
                continue
            if isinstance(failure, asyncio.TimeoutError):
                failure = LeaseError("the renewal got no answer before the term's end")
            self._last_failure = failure
            if not failing:
                log.warning("lfp-swarm-lease: renewing term %d of room %s failed: %s; retrying "
                            "until the deadline (in %.3f s)", self.fence, self.room_id, failure,
                            self._deadline - loop.time())
            failing = True
            wake = loop.time() + backoff.next()
