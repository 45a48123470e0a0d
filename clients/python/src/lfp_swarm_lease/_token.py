"""The leader token: the bearer capability of one term."""

from __future__ import annotations

import hmac

REDACTED = "[redacted]"


class LeaderToken:
    """A leader token.

    ``str``, ``repr``, f-strings and ``format`` show ``[redacted]``, so that printing or logging
    a result, or an exception's locals, cannot leak it. :meth:`reveal` returns the value; the
    client sends it only in request bodies, never in a URL.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise TypeError("lfp-swarm-lease: a leader token is a non-empty string")
        self._value = value

    def reveal(self) -> str:
        """The token itself, for a request body."""
        return self._value

    def __str__(self) -> str:
        return REDACTED

    def __repr__(self) -> str:
        return f"LeaderToken({REDACTED})"

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LeaderToken):
            return NotImplemented
        # Constant time: a token compared against a guess must not tell how much matched.
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((LeaderToken, self._value))
