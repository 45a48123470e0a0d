"""SwarmLeaseController.hold against the real binary: a follower takes over at once when the
leader leaves its block, renewals move the deadline, the body is cancelled before the deadline
when the store (a real etcd) dies and at once when the term is lost, and a follower cancelled
while it waits leaves no command behind."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lfp_swarm_lease import (
    ControllerLeadership,
    ControllerOptions,
    LeadershipEndedError,
    LeaseError,
    NotHolderError,
    SwarmLeaseController,
    safety_margin,
)
from support import Etcd, namespace, poll_until, sleep_until_cancelled

#: A body that is never cancelled ends after this long, and the test then fails.
BOUND = 30


async def connect(store: str, holder: str, ns: str, **over: object) -> SwarmLeaseController:
    return await SwarmLeaseController.connect(ControllerOptions(
        store=store, holder_id=holder, namespace=ns, min_backoff=0.05, max_backoff=0.2,
        **over))  # type: ignore[arg-type]


def commands_of(ns: str) -> list[str]:
    """The command lines of the processes that name the election ``ns``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(ns.encode() in a for a in args):
            found.append(" ".join(a.decode(errors="replace") for a in args))
    return found


async def test_a_follower_takes_over_at_once_when_the_leader_leaves_its_block(
        controller_binary: str, store: str) -> None:
    ns = namespace()
    a = await connect(store, "manager-a", ns, ttl_ms=30000)
    b = await connect(store, "manager-b", ns, ttl_ms=30000)
    release = asyncio.Event()
    fences: dict[str, int] = {}
    left_at: list[float] = []
    loop = asyncio.get_running_loop()

    async def worker(name: str, controller: SwarmLeaseController) -> None:
        async with controller.hold() as leadership:
            fences[name] = leadership.fence
            await release.wait()
        left_at.append(loop.time())

    ta = asyncio.ensure_future(worker("a", a))
    await poll_until(10, "a leads", lambda: "a" in fences)
    tb = asyncio.ensure_future(worker("b", b))
    # b waits with try-acquire --wait: the lease has 30 s left, only the release can end it.
    await poll_until(10, "b waits", lambda: any("--wait" in c for c in commands_of(ns)))
    assert "b" not in fences
    release.set()  # a leaves its block and releases; b, released too, leaves once it has won
    await asyncio.wait_for(asyncio.gather(ta, tb), 10)
    assert left_at[1] - left_at[0] < 2, "the handover waited for the lease's expiry"
    assert fences["b"] > fences["a"]
    assert (await a.inspect()).state == "vacant", "b released on leaving"


async def test_renews_from_the_start_of_the_last_command_and_releases(
        controller_binary: str, store: str) -> None:
    ns = namespace()
    controller = await connect(store, "manager-a", ns, ttl_ms=3000, jitter=lambda: 0.0)
    loop = asyncio.get_running_loop()
    before = loop.time()
    async with controller.hold(renew_interval=0.3) as leadership:
        after = loop.time()
        first = leadership.deadline
        # The deadline counts from the start of the winning command: TTL − margin after it.
        assert before + 3 - safety_margin(3) <= first <= after + 3 - safety_margin(3)
        await poll_until(5, "a renewal moved the deadline",
                         lambda: leadership.deadline > first + 0.25)
        snap = await controller.inspect()
        assert (snap.state, snap.fence) == ("held", leadership.fence)
        assert leadership.grant.renewed_at > leadership.grant.acquired_at
    assert leadership.cause is not None and leadership.cause.reason == "resigned"
    assert (await controller.inspect()).state == "vacant"


async def test_the_body_is_cancelled_before_the_deadline_when_the_store_dies(
        controller_binary: str, etcd: Etcd) -> None:
    controller = await connect(etcd.store, "manager-a", namespace(), ttl_ms=4000, timeout=2.0,
                               etcd_dial_timeout_ms=500, etcd_request_timeout_ms=500)
    loop = asyncio.get_running_loop()
    cancelled_at: list[float] = []
    held: list[ControllerLeadership] = []
    killed_at = 0.0
    with pytest.raises(LeadershipEndedError) as ended:
        async with controller.hold(stop_before=0.5) as leadership:
            held.append(leadership)
            killed_at = loop.time()
            await etcd.kill()
            await sleep_until_cancelled(cancelled_at)
    leadership = held[0]
    assert ended.value.reason == "deadline" and leadership.cause is ended.value
    assert isinstance(ended.value.__cause__, LeaseError), "the last failed renewal"
    assert cancelled_at, "the body was cancelled"
    late = cancelled_at[0] - (leadership.deadline - 0.5)
    assert late <= 0.2, f"cancelled {late:.3f} s after deadline − stop_before"
    assert cancelled_at[0] - killed_at < 4


async def test_the_body_is_cancelled_when_the_term_is_lost(controller_binary: str,
                                                           store: str) -> None:
    ns = namespace()
    controller = await connect(store, "manager-a", ns, ttl_ms=10000)
    operator = await connect(store, "operator", ns)
    with pytest.raises(LeadershipEndedError) as ended:
        async with controller.hold(renew_interval=0.2):
            await operator.destroy()  # the election is gone: the next renewal is refused
            await asyncio.sleep(BOUND)
    assert ended.value.reason == "lost"
    assert isinstance(ended.value.__cause__, NotHolderError)


async def test_cancelled_while_following_leaves_no_command_behind(controller_binary: str,
                                                                  store: str) -> None:
    ns = namespace()
    leader = await connect(store, "manager-a", ns)
    grant = (await leader.try_acquire()).grant
    assert grant is not None
    follower = await connect(store, "manager-b", ns)

    async def follow() -> None:
        async with follower.hold():
            pytest.fail("manager-b cannot win while manager-a holds the lease")

    task = asyncio.ensure_future(follow())
    await poll_until(10, "b waits", lambda: any("--wait" in c for c in commands_of(ns)))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert commands_of(ns) == [], "the waiting try-acquire was stopped"
    snap = await leader.inspect()
    assert (snap.holder_id, snap.fence) == ("manager-a", grant.fence)


async def test_a_timing_that_does_not_fit_the_ttl_is_refused(controller_binary: str,
                                                             store: str) -> None:
    controller = await connect(store, "manager-a", namespace(), ttl_ms=3000)
    with pytest.raises(ValueError, match="renew_interval"):
        controller.hold(renew_interval=2.8)
