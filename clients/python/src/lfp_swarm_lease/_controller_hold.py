"""``SwarmLeaseController.hold``: waits for the Swarm lease, then guards the body of an ``async
with`` block with the term (:class:`ControllerLeadership`), and releases it when the block is
left — for a process that must hold the lease itself rather than run under ``run``."""

from __future__ import annotations

import asyncio
import math

from . import _timing
from ._backoff import Backoff
from ._calls import ControllerCalls
from ._errors import (
    BinaryNotFoundError,
    ControllerError,
    LeaseError,
    NotHolderError,
    ProtocolError,
)
from ._grant import Grant
from ._term import Term, TermHold, TermLost

#: How long each ``try-acquire --wait`` of a follower waits for the lease before it is asked
#: again; a release or expiry ends the wait at once.
FOLLOW_WAIT = 30.0


class ControllerLeadership(Term):
    """One term of the Swarm lease won by :class:`ControllerHold`, alive until it ends;
    :attr:`cause` then says why."""

    def __init__(self, controller: ControllerCalls, grant: Grant, *, start: float,
                 stop_before: float, interval: float, body: asyncio.Task[object]) -> None:
        """Use :meth:`SwarmLeaseController.hold`: this starts the renewals and the deadline's
        timer of ``grant``, whose confirming command started at ``start`` (``loop.time()``)."""
        self._controller = controller
        self._grant = grant
        opts = controller.options
        super().__init__(fence=grant.fence, what=f"election {grant.namespace}", start=start,
                         ttl=grant.ttl_ms / 1000, stop_before=stop_before, interval=interval,
                         body=body, logger=opts.logger, min_backoff=opts.min_backoff,
                         max_backoff=opts.max_backoff, jitter=opts.jitter)

    @property
    def grant(self) -> Grant:
        """The term as the store last confirmed it (the acquisition, then each renewal)."""
        return self._grant

    async def _renew_once(self) -> float:
        try:
            renewed = await self._controller.renew(self._grant)
        except NotHolderError as e:
            raise TermLost("the store says this identity no longer holds the lease") from e
        except ControllerError as e:
            if not e.temporary:
                raise TermLost("the binary refused the renewal") from e
            raise
        if not self.ended:
            self._grant = renewed
        return renewed.ttl_ms / 1000

    async def _resign_once(self) -> int:
        await self._controller.release(self._grant)
        return self.fence


class ControllerHold(TermHold[ControllerLeadership]):
    """The async context manager of :meth:`SwarmLeaseController.hold`.

    Entering acquires the lease: while another contender holds it, it waits with
    ``try-acquire --wait``, which a release or an expiry ends at once; a store that cannot be
    reached is retried with jittered exponential back-off; a setting the binary refuses raises
    :class:`ConfigurationError`. A term won after a wait is confirmed by a renewal before the
    body runs, so that its deadline counts from a command whose start is known.

    Inside the block the term is renewed in the background every third of its TTL (or
    ``renew_interval``). Its safety deadline follows the rule of the rooms' ``hold`` and of
    ``run``: the start of the last command that the store confirmed + TTL − the safety margin
    (a tenth of the TTL, at most 2 s), on this process's monotonic clock, never the record's
    ``expires_at``. ``stop_before`` seconds before it without a successful renewal — or at once
    when the store says the term is over (:class:`NotHolderError`) — the body is cancelled and
    the block raises :class:`LeadershipEndedError`. Leaving the block releases the term, so
    that another contender takes over at once.

    ``run`` is safer where it fits: its guard stops the leader's command on time even when this
    process is paused or stuck; a body in a ``hold`` stops only when the event loop runs.
    """

    def __init__(self, controller: ControllerCalls, *, stop_before: float,
                 renew_interval: float | None) -> None:
        if not (isinstance(stop_before, (int, float)) and stop_before >= 0
                and math.isfinite(stop_before)):
            raise ValueError(f"lfp-swarm-lease: hold: stop_before ({stop_before!r}) must be 0 or "
                             "a positive number of seconds")
        ttl_ms = controller.options.ttl_ms
        if ttl_ms is not None:
            # Checked again with the TTL the store records, once the lease is won; here only
            # when the options already say it, so that a wrong combination fails before it.
            interval = ttl_ms / 3000 if renew_interval is None else renew_interval
            _timing.check(ttl_ms / 1000, interval, stop_before)
        super().__init__()
        self._controller = controller
        self._stop_before = float(stop_before)
        self._renew_interval = renew_interval

    async def _win(self, body: asyncio.Task[object]) -> ControllerLeadership:
        start, grant = await self._campaign()
        ttl = grant.ttl_ms / 1000
        interval = self._renew_interval
        if interval is None:
            interval = ttl / 3
        try:
            _timing.check(ttl, interval, self._stop_before)
        except ValueError:
            await self._give_back(grant)
            raise
        return ControllerLeadership(self._controller, grant, start=start,
                                    stop_before=self._stop_before, interval=interval, body=body)

    async def _campaign(self) -> tuple[float, Grant]:
        controller = self._controller
        opts = controller.options
        log = opts.logger
        loop = asyncio.get_running_loop()
        backoff = Backoff(opts.min_backoff, opts.max_backoff, opts.jitter)
        followed = ""
        last_failure = ""
        wait = 0.0
        while True:
            start = loop.time()
            try:
                result = await controller.try_acquire(wait=wait)
            except (BinaryNotFoundError, ProtocolError):
                raise  # no binary, or one of another version: trying again changes nothing
            except ControllerError as e:
                if not e.temporary:
                    raise
                failure: LeaseError = e
            except LeaseError as e:  # a command that did not answer in time: retried
                failure = e
            else:
                backoff.reset()
                last_failure = ""
                if result.grant is not None:
                    if not wait:
                        return start, result.grant
                    confirmed = await self._confirm(result.grant)
                    if confirmed is not None:
                        return confirmed
                    wait = 0.0
                    continue
                if result.current_holder_id != followed:
                    followed = result.current_holder_id
                    log.info("lfp-swarm-lease: election %s is held by %s (fence %d); waiting "
                             "for it", result.namespace, followed or "nobody",
                             result.current.fence)
                wait = FOLLOW_WAIT
                continue
            wait = 0.0
            delay = backoff.next()
            if str(failure) != last_failure:  # one line per distinct failure
                log.warning("lfp-swarm-lease: acquiring the lease failed: %s; retrying in "
                            "%.3f s", failure, delay)
                last_failure = str(failure)
            await asyncio.sleep(delay)

    async def _confirm(self, grant: Grant) -> tuple[float, Grant] | None:
        """Renews a term won after a wait, whose write may lie anywhere in that wait: the
        renewal's start bounds its deadline instead. A term that cannot be confirmed is given
        back (None), and the campaign goes on."""
        start = asyncio.get_running_loop().time()
        try:
            return start, await self._controller.renew(grant)
        except LeaseError as e:
            self._controller.options.logger.warning(
                "lfp-swarm-lease: confirming term %d of election %s failed: %s; giving it back",
                grant.fence, grant.namespace, e)
            await self._give_back(grant)
            return None

    async def _give_back(self, grant: Grant) -> None:
        try:
            await self._controller.release(grant)
        except LeaseError:
            pass  # the lease expires by itself
