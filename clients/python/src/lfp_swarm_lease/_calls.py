"""The calls a holder makes: :class:`LeaseClient` implements :class:`RoomCalls`, and
:mod:`._hold` and :mod:`._leadership` depend on this protocol, not on the client that
implements it — so that the client and its holder do not import each other."""

from __future__ import annotations

from typing import Protocol

from ._models import CampaignResult, ResignResult, WatchFrame
from ._options import Options
from ._stream import StreamSpec
from ._token import LeaderToken


class RoomCalls(Protocol):
    """The elections API as a holder uses it."""

    @property
    def options(self) -> Options:
        """The client's settings."""
        ...

    async def campaign(self, room_id: str, candidate_id: str, *, ttl: int | None = None,
                       metadata: str | None = None) -> CampaignResult:
        """``POST /elections/{id}/campaign``."""
        ...

    async def renew(self, room_id: str, token: LeaderToken | str, ttl: int | None = None,
                    ) -> CampaignResult:
        """``POST /elections/{id}/renew``."""
        ...

    async def resign(self, room_id: str, token: LeaderToken | str) -> ResignResult:
        """``POST /elections/{id}/resign``."""
        ...

    def _room_spec(self, room_id: str, initial_timeout: float | None) -> StreamSpec[WatchFrame]:
        """The room's watch stream."""
        ...
