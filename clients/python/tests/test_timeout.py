"""``within``: a step within a time limit whose caller's cancellation is never lost."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import pytest

from lfp_swarm_lease._timeout import within

Limit = Callable[[Awaitable[int], float], Awaitable[int]]


async def cancelled_as_the_step_finishes(limit: Limit) -> bool:
    """Whether a task cancelled in the same turn of the loop as its step finishes ends
    cancelled (rather than running on with the step's result)."""
    step: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    ran_on = False

    async def caller() -> None:
        nonlocal ran_on
        await limit(step, 10)
        ran_on = True

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0)  # the caller is waiting in the limit
    step.set_result(1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return task.cancelled() and not ran_on


async def test_a_cancellation_that_comes_as_the_step_finishes_is_kept() -> None:
    assert await cancelled_as_the_step_finishes(within)


@pytest.mark.skipif(sys.version_info >= (3, 12),
                    reason="wait_for keeps the cancellation from Python 3.12 on")
async def test_wait_for_loses_it_before_python_3_12() -> None:
    # The flaw within exists for: were it gone, within could be wait_for.
    assert not await cancelled_as_the_step_finishes(asyncio.wait_for)


async def test_the_result_or_a_timeout() -> None:
    async def answer(after: float) -> int:
        await asyncio.sleep(after)
        return 42

    assert await within(answer(0), 5) == 42
    assert await within(answer(0), None) == 42
    with pytest.raises(asyncio.TimeoutError):
        await within(answer(5), 0.01)


async def test_a_timeout_cancels_the_step_and_a_shielded_one_runs_on() -> None:
    gate = asyncio.Event()
    inner = asyncio.ensure_future(gate.wait())
    with pytest.raises(asyncio.TimeoutError):
        await within(asyncio.shield(inner), 0.01)
    assert not inner.done()
    gate.set()
    assert await inner
    step = asyncio.ensure_future(asyncio.sleep(5))
    with pytest.raises(asyncio.TimeoutError):
        await within(step, 0.01)
    assert step.cancelled()
