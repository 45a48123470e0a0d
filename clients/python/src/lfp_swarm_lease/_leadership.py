"""Leadership: one term of a room won by ``hold``, kept renewed in the background; it cancels
the body it guards — before the term's safety deadline — when renewals stop succeeding."""

from __future__ import annotations

import asyncio

from ._calls import RoomCalls
from ._errors import LeaseApiError
from ._models import CampaignResult, ElectionLeader
from ._term import Term, TermLost
from ._token import LeaderToken


class Leadership(Term):
    """One term of a room won by :class:`Hold`, alive until it ends; :attr:`cause` then says
    why. Nothing it shows contains the token."""

    def __init__(self, client: RoomCalls, room_id: str, won: CampaignResult, *, start: float,
                 ttl: int, stop_before: float, interval: float, body: asyncio.Task[object]) -> None:
        """Use :meth:`LeaseClient.hold`: this starts the renewals and the deadline's timer of
        the term ``won``, whose winning request started at ``start`` (``loop.time()``)."""
        assert won.leader_token is not None
        self._client = client
        self.room_id = room_id
        """The room the term is of."""
        self._token: LeaderToken = won.leader_token
        self._leader = won.leader
        self._ttl = ttl
        opts = client.options
        # The fence is the number the elections API calls the term (``leader.term``).
        super().__init__(fence=won.leader.term, what=f"room {room_id}", start=start, ttl=ttl,
                         stop_before=stop_before, interval=interval, body=body,
                         logger=opts.logger, min_backoff=opts.min_backoff,
                         max_backoff=opts.max_backoff, jitter=opts.jitter)

    @property
    def leader(self) -> ElectionLeader:
        """The term as the server last answered it (the winning campaign, then each renewal)."""
        return self._leader

    async def _renew_once(self) -> float:
        try:
            result = await self._client.renew(self.room_id, self._token, self._ttl)
        except LeaseApiError as e:
            if e.lease_not_current or not e.temporary:
                raise TermLost("the server refused the renewal") from e
            raise
        if not result.is_leader or result.leader.term != self.fence:
            # A renewal always answers leader with the same term; anything else is not this term.
            raise TermLost(f"the renewal answered {result.status} with term {result.leader.term}")
        if not self.ended:
            self._leader = result.leader
        return self._ttl

    async def _resign_once(self) -> int:
        return (await self._client.resign(self.room_id, self._token)).previous_term
