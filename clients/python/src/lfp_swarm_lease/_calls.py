"""The calls a holder makes: :class:`LeaseClient` implements :class:`RoomCalls` and
:class:`SwarmLeaseController` implements :class:`ControllerCalls`; :mod:`._hold`,
:mod:`._leadership` and :mod:`._controller_hold` depend on these protocols, not on what
implements them — so that the client or controller and its holder do not import each other."""

from __future__ import annotations

from typing import Protocol

from ._controller_options import ControllerOptions
from ._grant import Grant, TryAcquireResult
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


class ControllerCalls(Protocol):
    """The Swarm lease's one-shot commands as a holder uses them."""

    @property
    def options(self) -> ControllerOptions:
        """The controller's settings."""
        ...

    async def try_acquire(self, *, wait: float = 0) -> TryAcquireResult:
        """``try-acquire``, waiting up to ``wait`` seconds."""
        ...

    async def renew(self, grant: Grant) -> Grant:
        """``renew``."""
        ...

    async def release(self, grant: Grant) -> None:
        """``release``."""
        ...
