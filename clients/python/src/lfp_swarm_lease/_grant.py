"""What :class:`SwarmLeaseController` returns: the ``--json`` objects of the binary's one-shot
commands, with the binary's field names (decoded strictly, as the server's answers are)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from ._models import State

_NON_NEGATIVE = {"minimum": 0}


@dataclass(frozen=True)
class Grant:
    """A term this controller won (``try_acquire``) or renewed (``renew``). Pass it to
    :meth:`~SwarmLeaseController.renew` and :meth:`~SwarmLeaseController.release`.

    Timestamps come from this host's clock and are informational: what keeps a leader safe is
    the fence, which a protected resource compares, and the deadline a ``hold`` measures on
    the monotonic clock."""

    namespace: str
    """The election's name."""
    holder_id: str
    """This controller's holder id."""
    node_id: str
    """This controller's Swarm node id (empty outside Swarm)."""
    task_id: str
    """This controller's Swarm task id (empty outside Swarm)."""
    fence: int = field(metadata=_NON_NEGATIVE)
    """The term's fencing token: strictly increasing, never reused; a renewal keeps it."""
    acquired_at: datetime
    """When the term started."""
    renewed_at: datetime
    """The last write of the term (its start, or the last renewal)."""
    expires_at: datetime
    """When the lease expires unless renewed."""
    ttl_ms: int
    """The lease duration recorded for the term, in milliseconds."""
    version: int = field(metadata=_NON_NEGATIVE)
    """The store's version of the record."""


@dataclass(frozen=True)
class ElectionState(State):
    """The election as a command found it: the controller API's :class:`State` plus the
    store's version of the record."""

    version: int = field(metadata=_NON_NEGATIVE)
    """The store's version of the record (0 when there is none)."""


@dataclass(frozen=True)
class ElectionSnapshot(ElectionState):
    """What ``inspect()`` and ``init()`` return: the election's state and the store it lives
    in."""

    state: Literal["held", "expired", "vacant"]
    """``held`` (a holder whose lease has not expired), ``expired`` (anyone may take it) or
    ``vacant`` (no holder: never held, released, or no election yet)."""
    store: str
    """The store, described (e.g. ``file store /var/lib/lease (this host only)``)."""


@dataclass(frozen=True)
class TryAcquireResult:
    """What ``try_acquire()`` returns, whether or not it won."""

    acquired: bool
    """Whether this attempt won the lease."""
    namespace: str
    """The election's name."""
    store: str
    """The store, described."""
    current: ElectionState
    """The election as the attempt left it (the new term when it won)."""
    available_at: datetime | None
    """When another contender may take the lease over: the holder's expiry plus the clock
    skew every contender allows (``None`` unless another contender holds it)."""
    grant: Grant | None = None
    """The term won; ``None`` when another contender holds the lease."""

    @property
    def current_holder_id(self) -> str:
        """Who holds the lease now: this controller's holder id when it won, another's when it
        did not, ``""`` for none."""
        return self.current.holder_id if self.current.has_holder else ""
