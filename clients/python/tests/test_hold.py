"""``hold`` against a real ``serve``: handover on leaving the block, renewals timed from the
start of the last confirmed request, the body cancelled before the safety deadline when the
server dies, and the term lost when the server says it is over."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

import pytest

from lfp_swarm_lease import (
    LeadershipEndedError,
    LeaseApiError,
    LeaseClient,
    Leadership,
    Options,
    safety_margin,
)
from support import Processes, metric, poll_until, sleep_until_cancelled

FAST = Options(min_backoff=0.05, max_backoff=0.2)
#: A body that is never cancelled ends after this long, and the test then fails.
BOUND = 20


async def watching(procs: Processes, yes: bool) -> bool:
    """Whether a room watch stream is open on the first server (yes) or none is (not yes)."""
    n = await metric(procs.started[0].base, "lfp_swarm_lease_election_watches") or 0
    return n >= 1 if yes else n == 0


async def test_a_follower_takes_over_at_once_when_the_leader_leaves_its_block(
        procs: Processes, store: str) -> None:
    client = LeaseClient((await procs.serve(store)).base, FAST)
    rid = (await client.create_room()).election_id
    release = asyncio.Event()
    terms: dict[str, int] = {}
    left_at: list[float] = []
    loop = asyncio.get_running_loop()

    async def worker(name: str) -> None:
        async with client.hold(rid, name, ttl=30) as leadership:
            terms[name] = leadership.fence
            await release.wait()
        left_at.append(loop.time())

    a = asyncio.ensure_future(worker("worker-a"))
    await poll_until(5, "worker-a leads", lambda: "worker-a" in terms)
    b = asyncio.ensure_future(worker("worker-b"))
    # b follows: the lease has 30 s left, so only the room's watch can wake it sooner.
    await poll_until(5, "b follows the room", lambda: watching(procs, True))
    assert "worker-b" not in terms
    release.set()  # a leaves its block and resigns; b, released too, leaves once it has won
    await asyncio.wait_for(asyncio.gather(a, b), 5)
    assert left_at[1] - left_at[0] < 2, "the handover waited for the lease's expiry"
    assert terms["worker-b"] > terms["worker-a"]
    assert (await client.status(rid)).status == "vacant", "b resigned on leaving"


async def test_renews_from_the_start_of_the_last_request_and_keeps_the_term(
        procs: Processes, store: str) -> None:
    client = LeaseClient((await procs.serve(store)).base,
                         Options(min_backoff=0.05, max_backoff=0.2, jitter=lambda: 0.0))
    rid = (await client.create_room()).election_id
    loop = asyncio.get_running_loop()
    before = loop.time()
    async with client.hold(rid, "worker-a", ttl=5, renew_interval=0.3) as leadership:
        after = loop.time()
        first = leadership.deadline
        # The deadline counts from the start of the winning request: TTL − margin after it.
        assert before + 5 - safety_margin(5) <= first <= after + 5 - safety_margin(5)
        await poll_until(3, "a renewal moved the deadline",
                         lambda: leadership.deadline > first + 0.25)
        assert not leadership.ended
        status = await client.status(rid)
        assert status.leader is not None and status.leader.term == leadership.fence
    assert leadership.cause is not None and leadership.cause.reason == "resigned"
    assert (await client.status(rid)).status == "vacant"


async def test_the_body_is_cancelled_before_the_deadline_when_the_server_is_killed(
        procs: Processes, store: str, caplog: pytest.LogCaptureFixture) -> None:
    srv = await procs.serve(store)
    client = LeaseClient(srv.base, FAST)
    rid = (await client.create_room()).election_id
    loop = asyncio.get_running_loop()
    cancelled_at: list[float] = []
    held: list[Leadership] = []
    killed_at = 0.0
    caplog.set_level(logging.WARNING, logger="lfp_swarm_lease")
    with pytest.raises(LeadershipEndedError) as ended:
        async with client.hold(rid, "worker-a", ttl=5, stop_before=0.5) as leadership:
            held.append(leadership)
            killed_at = loop.time()
            await srv.stop(signal.SIGKILL)
            await sleep_until_cancelled(cancelled_at)
    leadership = held[0]
    assert ended.value.reason == "deadline"
    assert leadership.cause is ended.value
    assert isinstance(ended.value.__cause__, ConnectionError), "the last failed renewal"
    assert cancelled_at, "the body was cancelled"
    # The deadline is the start of the last confirmed request + 5 s − 0.5 s: the body must
    # stop 0.5 s (stop_before) before it, and within the TTL of the kill.
    # A little slack for a loaded machine's event loop, well inside the 0.5 s.
    late = cancelled_at[0] - (leadership.deadline - 0.5)
    assert late <= 0.2, f"cancelled {late:.3f} s after deadline − stop_before"
    assert cancelled_at[0] - killed_at < 5
    assert "renewing term" in caplog.text
    task = asyncio.current_task()
    assert task is not None
    if sys.version_info >= (3, 11):
        assert task.cancelling() == 0, "the cancellation was taken back"


async def test_the_body_is_cancelled_when_the_server_says_the_term_is_over(
        procs: Processes, store: str) -> None:
    client = LeaseClient((await procs.serve(store)).base, FAST)
    rid = (await client.create_room()).election_id
    held: list[Leadership] = []
    with pytest.raises(LeadershipEndedError) as ended:
        async with client.hold(rid, "worker-a", ttl=10, renew_interval=0.2) as leadership:
            held.append(leadership)
            # Another process ends the term with the token, as an operator's resign would.
            await client.resign(rid, leadership._token)
            await asyncio.sleep(BOUND)  # cancelled long before
    assert ended.value.reason == "lost"
    cause = ended.value.__cause__
    assert isinstance(cause, LeaseApiError) and cause.vacant
    assert await held[0].resign() == 0, "nothing to resign after a loss"


async def test_an_exception_of_the_body_goes_on_and_the_term_is_resigned(
        procs: Processes, store: str) -> None:
    client = LeaseClient((await procs.serve(store)).base, FAST)
    rid = (await client.create_room()).election_id
    with pytest.raises(KeyError):
        async with client.hold(rid, "worker-a", ttl=10):
            raise KeyError("the work failed")
    assert (await client.status(rid)).status == "vacant"


async def test_cancelled_while_following_ends_cleanly(procs: Processes, store: str) -> None:
    client = LeaseClient((await procs.serve(store)).base, FAST)
    rid = (await client.create_room()).election_id
    leader = await client.campaign(rid, "worker-a", ttl=30)

    async def follow() -> None:
        async with client.hold(rid, "worker-b", ttl=30):
            pytest.fail("worker-b cannot win while worker-a leads")

    task = asyncio.ensure_future(follow())
    await poll_until(5, "b follows the room", lambda: watching(procs, True))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await poll_until(5, "the follower's watch is closed", lambda: watching(procs, False))
    status = await client.status(rid)
    assert status.leader is not None and status.leader.term == leader.leader.term


async def test_a_hold_is_entered_once(procs: Processes, store: str) -> None:
    client = LeaseClient((await procs.serve(store)).base, FAST)
    hold = client.hold("room-abcdefgh", "worker-a", ttl=10)
    async with hold as leadership:
        assert "room-abcdefgh" in repr(leadership) and "held" in repr(leadership)
    with pytest.raises(RuntimeError, match="entered once"):
        async with hold:
            pass
