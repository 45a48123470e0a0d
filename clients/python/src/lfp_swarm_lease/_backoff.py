"""The waits between connection attempts."""

from __future__ import annotations

from collections.abc import Callable

from ._options import safe_jitter


class Backoff:
    """The n-th consecutive failure (n = 0, 1, …) waits between ``floor`` and
    ``floor·2^(n+1)``, capped at ``maximum``: the floor keeps a restarted server from being
    hammered, the random spread keeps its many clients from reconnecting in lockstep, and the
    doubling ceiling backs off from a server that stays away.

    ``floor`` is ``minimum`` unless a server's ``retry:`` field raised it (:meth:`raise_floor`).
    """

    def __init__(self, minimum: float, maximum: float, jitter: Callable[[], float]) -> None:
        self.minimum = minimum
        self.maximum = maximum
        self.floor = minimum
        self._jitter = jitter
        self._failures = 0

    def raise_floor(self, seconds: float) -> None:
        """Takes a server's reconnection time (an SSE ``retry:`` field) as the floor, between
        ``minimum`` and ``maximum``: the server knows how soon it wants clients back, but must
        not hold them longer than the client's own limit."""
        self.floor = min(max(self.minimum, seconds), self.maximum)

    def next(self) -> float:
        """The wait before the next attempt; counts one more failure."""
        ceiling = self.floor
        for _ in range(self._failures + 1):
            if ceiling >= self.maximum:
                break
            ceiling = min(ceiling * 2, self.maximum)
        self._failures += 1
        return self.floor + safe_jitter(self._jitter) * (ceiling - self.floor)

    def reset(self) -> None:
        """Starts the doubling again: the connection worked."""
        self._failures = 0
