"""The timing rule of a term: the Go module lease/timing's, which the Go and TypeScript clients
and ``run --server`` share (docs/safety.md §7a states it once)."""

from __future__ import annotations

import math

MIN_TTL = 5
MAX_TTL = 300


def safety_margin(ttl: float) -> float:
    """How much earlier than the TTL (seconds) a holder's safety deadline falls: a tenth of the
    TTL, at most two seconds. It absorbs clock-rate differences between the holder and the
    server."""
    return min(ttl / 10, 2.0)


def window(ttl: float) -> float:
    """How long a holder may work after the start of a confirmed request: TTL − margin."""
    return ttl - safety_margin(ttl)


def check(ttl: float, renew_interval: float, stop_before: float) -> None:
    """Refuses a renew interval plus stop time that does not fit in the TTL minus its margin:
    the term must survive a few failed renewals and still end, with its work stopped, before
    the server may hand the room to anyone else."""
    if not (isinstance(renew_interval, (int, float)) and renew_interval > 0
            and math.isfinite(renew_interval)):
        raise ValueError(f"lfp-swarm-lease: hold: renew_interval ({renew_interval!r}) must be a "
                         "positive number of seconds")
    if not (isinstance(stop_before, (int, float)) and stop_before >= 0
            and math.isfinite(stop_before)):
        raise ValueError(f"lfp-swarm-lease: hold: stop_before ({stop_before!r}) must be 0 or a "
                         "positive number of seconds")
    if renew_interval + stop_before >= window(ttl):
        raise ValueError(
            f"lfp-swarm-lease: hold: renew_interval ({renew_interval:g} s) plus stop_before "
            f"({stop_before:g} s) must be below the TTL minus its safety margin "
            f"({window(ttl):g} s): lower them or raise ttl")
