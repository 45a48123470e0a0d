"""The back-off between attempts, and the settings' checks."""

from __future__ import annotations

import random

import pytest

from lfp_swarm_lease import LeaseClient, Options, RemoteLeaseObserver
from lfp_swarm_lease._backoff import Backoff


def test_bounds_and_growth() -> None:
    # With the top of the jitter range the waits are the ceilings: doubling up to the maximum.
    b = Backoff(0.25, 4.0, lambda: 0.999999)
    waits = [round(b.next(), 3) for _ in range(7)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0]
    b.reset()
    assert round(b.next(), 3) == 0.5
    low = Backoff(0.25, 4.0, lambda: 0.0)
    assert [low.next() for _ in range(3)] == [0.25, 0.25, 0.25]


def test_random_jitter_stays_within_bounds() -> None:
    b = Backoff(0.1, 2.0, random.random)
    for _ in range(500):
        assert 0.1 <= b.next() <= 2.0


@pytest.mark.parametrize("value", [-1.0, 1.0, 7.5, float("nan")])
def test_a_broken_jitter_source_keeps_the_bounds(value: float) -> None:
    b = Backoff(0.25, 4.0, lambda: value)
    assert b.next() == 0.25


def test_a_servers_retry_raises_the_floor_up_to_the_maximum() -> None:
    b = Backoff(0.25, 4.0, lambda: 0.0)
    b.raise_floor(1.5)
    assert b.next() == 1.5
    b.raise_floor(3600)
    assert b.next() == 4.0, "a server cannot hold the client longer than max_backoff"
    b.raise_floor(0.0)
    assert b.next() == 0.25, "nor bring it below min_backoff"


@pytest.mark.parametrize("kwargs,name", [
    ({"initial_timeout": 0}, "initial_timeout"),
    ({"request_timeout": -1}, "request_timeout"),
    ({"min_backoff": float("inf")}, "min_backoff"),
    ({"min_backoff": 2, "max_backoff": 1}, "max_backoff"),
    ({"idle_timeout": -1}, "idle_timeout"),
    ({"headers": {"X-A": "b\r\nEvil: 1"}}, "headers"),
])
def test_invalid_options_name_the_option(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        Options(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("url", ["ftp://x", "localhost:8080", "http://", "http://h:port",
                                 "http://u:p@h", "http://h/?q=1"])
def test_invalid_base_urls_are_refused_at_once(url: str) -> None:
    with pytest.raises(ValueError, match="base URL"):
        RemoteLeaseObserver.connect(url)
    with pytest.raises(ValueError, match="base URL"):
        LeaseClient(url)
