"""The contract's objects (clients/openapi.json, ``components.schemas``), one dataclass each,
with the wire's field names. tests/test_contract.py checks them against the contract field by
field: names, required or optional, nullability, types, enums and minimums."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from ._token import LeaderToken

_NON_NEGATIVE = {"minimum": 0}


# --- the controller endpoints (GET /v1/state, /v1/events, /v1/info, /healthz, /readyz) ---


@dataclass(frozen=True)
class State:
    """The election as a controller observes it: the body of ``GET /v1/state`` and the data of
    every event of ``GET /v1/events``.

    Timestamps come from the holder's clock and are informational; a consumer that must act
    safely on leadership compares fences, never times.
    """

    namespace: str
    """The election's name."""
    exists: bool
    """Whether the election has a stored record (false before the first acquisition and after
    ``destroy``)."""
    acquired: bool
    """Whether the election has a holder whose lease has not expired."""
    holder_id: str
    """The holder's id (empty without a holder)."""
    node_id: str
    """The holder's Swarm node id."""
    task_id: str
    """The holder's Swarm task id."""
    fence: int = field(metadata=_NON_NEGATIVE)
    """The fencing token of the current (or last) term: strictly increasing, never reused."""
    acquired_at: datetime | None
    """When the current term started (holder's clock); ``None`` without a term."""
    renewed_at: datetime | None
    """The holder's last renewal (holder's clock)."""
    expires_at: datetime | None
    """When the lease expires unless renewed (holder's clock)."""
    ttl_ms: int
    """The lease duration the holder recorded, in milliseconds."""

    @property
    def has_holder(self) -> bool:
        """Whether the election has a live holder: an expired or released lease may still name
        its last one, so ``holder_id`` alone does not say that."""
        return self.acquired and self.holder_id != ""


def state_changed(a: State, b: State) -> bool:
    """Whether ``b`` is another state of the election than ``a`` for an observer. Like the
    server's own filter it ignores the timestamps, so that routine renewals are no change."""
    return (a.exists, a.acquired, a.holder_id, a.node_id, a.task_id, a.fence) != (
        b.exists, b.acquired, b.holder_id, b.node_id, b.task_id, b.fence)


@dataclass(frozen=True)
class Info:
    """``GET /v1/info``: the bound election and this process's identity."""

    namespace: str
    """The election this server serves."""
    holder_id: str
    """This process's holder id."""
    node_id: str
    """This process's Swarm node id."""
    task_id: str
    """This process's Swarm task id."""
    store: str
    """The store the election lives in."""
    version: str
    """The lfp-swarm-lease version."""


@dataclass(frozen=True)
class Health:
    """``GET /healthz`` and ``GET /readyz``."""

    status: str
    """``"ok"`` or ``"ready"``."""
    details: str | None = None
    """Damage the store found and worked around since the server started; ``None`` when none."""


@dataclass(frozen=True)
class ErrorBody:
    """The server's one error body; :class:`LeaseApiError` carries its fields."""

    error: str
    code: str
    details: str
    request_id: str
    retry_after_ms: int | None = None


# --- the elections ("rooms") API ---


@dataclass(frozen=True)
class CreatedElection:
    """A room created by ``POST /elections``; its paths are below the server's base URL."""

    election_id: str
    """The room's id: 192 random bits, base64url (32 characters)."""
    campaign_path: str
    status_path: str
    watch_path: str


@dataclass(frozen=True)
class ElectionLeader:
    """A room's current term as everyone may see it. It never carries the token."""

    candidate_id: str
    """The leader's candidate id (not a unique key)."""
    term: int = field(metadata=_NON_NEGATIVE)
    """The fencing term: strictly increasing within the room, never reused. Hand it to every
    resource the leader writes to."""
    expires_at: datetime
    """When the lease ends unless renewed, by the server's clock: informational (``hold`` never
    relies on it)."""
    metadata: str | None = None
    """The leader's metadata; ``None`` when it gave none."""


@dataclass(frozen=True)
class CampaignResult:
    """The answer of a campaign (leader or follower) or a renewal (always leader)."""

    status: Literal["leader", "follower"]
    """``"leader"``: the caller holds the term; ``"follower"``: someone else does (or the
    caller itself, campaigning again: it gets no second token)."""
    election_id: str
    leader: ElectionLeader
    """The room's leader: the caller when ``status`` is ``"leader"``."""
    leader_token: LeaderToken | None = None
    """Leaders only: the term's token. It prints as ``[redacted]``."""
    renew_after_ms: int | None = None
    """Leaders only: the server's suggestion of when to renew (half the TTL)."""
    retry_after_ms: int | None = None
    """Followers only: milliseconds until the leader's lease can be taken over."""

    @property
    def is_leader(self) -> bool:
        """Whether the caller holds the term."""
        return self.status == "leader"


@dataclass(frozen=True)
class ResignResult:
    """The answer of ``POST /elections/{id}/resign``."""

    election_id: str
    status: Literal["vacant"]
    previous_term: int = field(metadata=_NON_NEGATIVE)
    """The term that ended."""


@dataclass(frozen=True)
class ElectionStatus:
    """``GET /elections/{id}``: a room's leader, never its token. A room nobody campaigned in
    is vacant."""

    election_id: str
    status: Literal["leader", "vacant"]
    retry_after_ms: int
    """Milliseconds until the leader's lease can be taken over; 0 when vacant."""
    leader: ElectionLeader | None = None
    """The live leader; ``None`` when vacant."""


@dataclass(frozen=True)
class WatchFrame:
    """One frame of ``GET /elections/{id}/watch``: a room's state when the server read it."""

    schema_version: Literal[1]
    election_id: str
    status: Literal["leader", "vacant"]
    leader: ElectionLeader | None
    """The live leader; ``None`` when vacant."""
    retry_after_ms: int
    """Milliseconds until the leader's lease can be taken over; 0 when vacant."""
    observed_at: datetime
    """When the server read the state."""


def same_room_state(a: WatchFrame, b: WatchFrame) -> bool:
    """Whether ``b`` shows what ``a`` showed: status and leader (candidate, metadata, term,
    expiry). The time left and the time of the read are not compared."""
    if a.status != b.status:
        return False
    if a.leader is None or b.leader is None:
        return a.leader is b.leader
    x, y = a.leader, b.leader
    return (x.candidate_id, x.metadata, x.term, x.expires_at) == (
        y.candidate_id, y.metadata, y.term, y.expires_at)


# --- request bodies (the client builds them) ---


@dataclass(frozen=True)
class CampaignRequest:
    """The body of ``POST /elections/{id}/campaign``."""

    candidate_id: str | None = None
    ttl_seconds: int | None = None
    metadata: str | None = None


@dataclass(frozen=True)
class RenewRequest:
    """The body of ``POST /elections/{id}/renew``."""

    leader_token: LeaderToken | None = None
    ttl_seconds: int | None = None


@dataclass(frozen=True)
class ResignRequest:
    """The body of ``POST /elections/{id}/resign``."""

    leader_token: LeaderToken | None = None
