"""``hold``: campaigns until it wins, then guards the body of an ``async with`` block with the
term (:class:`Leadership`), and resigns the term when the block is left."""

from __future__ import annotations

import asyncio

from . import _timing
from ._backoff import Backoff
from ._calls import RoomCalls
from ._errors import LeaseApiError, LeaseError
from ._leadership import Leadership
from ._models import CampaignResult
from ._options import safe_jitter
from ._stream import watch_stream
from ._term import TermHold, in_background
from ._timeout import within


#: A follower told to retry "now" (its leader's lease is just ending) must not campaign in a
#: tight loop.
MIN_FOLLOWER_WAIT = 0.02


def check_ttl(ttl: object, op: str) -> int | None:
    """The wire form of a TTL: ``None``, or whole seconds (the range is checked by the server
    for single calls, by :class:`Hold` before it starts)."""
    if ttl is None:
        return None
    if isinstance(ttl, float) and ttl.is_integer():
        ttl = int(ttl)
    if not isinstance(ttl, int) or isinstance(ttl, bool):
        raise ValueError(f"lfp-swarm-lease: {op}: ttl {ttl!r}: want a whole number of seconds "
                         f"from {_timing.MIN_TTL} to {_timing.MAX_TTL}")
    return ttl


class Hold(TermHold[Leadership]):
    """The async context manager of :meth:`LeaseClient.hold`.

    Entering campaigns until the room is won: while another candidate leads it waits the
    server's ``retry_after_ms``, or less when the room's watch shows it vacant (a resigning
    leader is replaced at once); rate and capacity limits are waited out for their
    ``Retry-After``; network and server failures are retried with jittered exponential back-off.
    An answer that retrying cannot change (an invalid candidate, metadata or TTL, disabled
    elections) raises :class:`LeaseApiError`.

    Inside the block the term is renewed in the background every third of the TTL (or
    ``renew_interval``), each wait timed from the start of the last confirmed request on the
    monotonic clock and shortened by up to a fifth at random.

    The term's safety deadline (:attr:`Leadership.deadline`) follows the rule the Go and
    TypeScript clients and ``run --server`` share, docs/safety.md §7a: it is measured on this
    process's monotonic clock from the start of the last request the server confirmed, never
    from the server's ``expires_at``. When the server says the term is over, or ``stop_before``
    seconds before the deadline without a successful renewal, the body (the task that entered
    the block) is cancelled, and the block raises :class:`LeadershipEndedError`
    with the cause. Leaving the block resigns the term (unless it was lost), so that a follower
    takes over at once; a failed resignation is logged, not raised (the lease then expires).

    A body that must not be interrupted at any await can run its work in a task of its own and
    watch :meth:`Leadership.wait_ended`; the fence for every write is :attr:`Leadership.fence`.
    """

    def __init__(self, client: RoomCalls, room_id: str, candidate_id: str, *, ttl: int,
                 metadata: str | None, stop_before: float, renew_interval: float | None) -> None:
        checked = check_ttl(ttl, "hold")
        if checked is None or not _timing.MIN_TTL <= checked <= _timing.MAX_TTL:
            raise ValueError(f"lfp-swarm-lease: hold: ttl {ttl!r}: want a whole number of seconds "
                             f"from {_timing.MIN_TTL} to {_timing.MAX_TTL}")
        if renew_interval is None:
            # A third of the TTL, as the Swarm lease renews, rather than the server's
            # renew_after_ms (half): the term must also survive slow answers and a few retries
            # before its deadline, which falls a margin and the stop time before the TTL.
            renew_interval = checked / 3
        _timing.check(checked, renew_interval, stop_before)
        super().__init__()
        self._client = client
        self._room = room_id
        self._candidate = candidate_id
        self._ttl = checked
        self._metadata = metadata
        self._stop_before = float(stop_before)
        self._interval = float(renew_interval)

    async def _win(self, body: asyncio.Task[object]) -> Leadership:
        start, won = await self._campaign()
        return Leadership(self._client, self._room, won, start=start, ttl=self._ttl,
                          stop_before=self._stop_before, interval=self._interval, body=body)

    async def _campaign(self) -> tuple[float, CampaignResult]:
        client = self._client
        opts = client.options
        log = opts.logger
        loop = asyncio.get_running_loop()
        backoff = Backoff(opts.min_backoff, opts.max_backoff, opts.jitter)
        vacancy: _VacancyWatch | None = None
        followed: tuple[str, int] | None = None
        last_failure = ""
        try:
            while True:
                # A vacancy seen before this campaign is answered by the campaign itself; one seen
                # after it (even before the answer arrives) must still wake the follower.
                if vacancy is not None:
                    vacancy.drain()
                start = loop.time()
                attempt = asyncio.ensure_future(client.campaign(
                    self._room, self._candidate, ttl=self._ttl, metadata=self._metadata))
                try:
                    result = await asyncio.shield(attempt)
                except asyncio.CancelledError:
                    # Cancelled while the campaign is under way: should it win, hand the term
                    # back rather than leave the room to wait for its expiry.
                    attempt.add_done_callback(self._hand_back)
                    raise
                except LeaseApiError as e:
                    if not e.temporary:
                        raise
                    failure: LeaseError = e
                except LeaseError as e:  # no answer, or not the contract's: retried
                    failure = e
                else:
                    backoff.reset()
                    last_failure = ""
                    if result.is_leader:
                        return start, result
                    leader = (result.leader.candidate_id, result.leader.term)
                    if leader != followed:
                        log.info("lfp-swarm-lease: following %s (term %d) in room %s; retry in "
                                 "%d ms", leader[0], leader[1], self._room,
                                 result.retry_after_ms or 0)
                        followed = leader
                    if vacancy is None:
                        vacancy = _VacancyWatch(client, self._room)
                    await vacancy.wait(max((result.retry_after_ms or 0) / 1000, MIN_FOLLOWER_WAIT))
                    continue
                delay = backoff.next()
                if isinstance(failure, LeaseApiError) and failure.retry_after > delay:
                    # A rate or capacity limit: the server says when. Up to a fifth more at
                    # random, so that the clients it refused together do not return together.
                    delay = failure.retry_after * (1 + safe_jitter(opts.jitter) / 5)
                if str(failure) != last_failure:  # one line per distinct failure
                    log.warning("lfp-swarm-lease: campaign in room %s failed: %s; retrying in "
                                "%.3f s", self._room, failure, delay)
                    last_failure = str(failure)
                await asyncio.sleep(delay)
        finally:
            if vacancy is not None:
                await vacancy.stop()

    def _hand_back(self, attempt: asyncio.Future[CampaignResult]) -> None:
        if attempt.cancelled() or attempt.exception() is not None:
            return
        won = attempt.result()
        if won.is_leader and won.leader_token is not None:
            in_background(self._client.resign(self._room, won.leader_token))


class _VacancyWatch:
    """Follows a room's watch stream while ``hold`` is a follower, and wakes it when the room
    is vacant. Its failures are not errors: the follower's timer still bounds each wait."""

    def __init__(self, client: RoomCalls, room_id: str) -> None:
        self._seen = asyncio.Event()
        # No initial timeout: the follower's timer bounds each wait, the watch only shortens it.
        self._stream = watch_stream(client._room_spec(room_id, None))
        self._task = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        try:
            async for frame in self._stream:
                if frame.status == "vacant":
                    self._seen.set()
        except LeaseError:
            pass

    def drain(self) -> None:
        """Forgets a vacancy seen so far."""
        self._seen.clear()

    async def wait(self, seconds: float) -> None:
        """Waits ``seconds``, or until a vacancy is seen (at once if one was since
        :meth:`drain`)."""
        try:
            await within(self._seen.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._stream.aclose()
