"""``within``: a step within a time limit whose caller's cancellation is never lost."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import pytest

from lfp_swarm_lease._timeout import within

Limit = Callable[[Awaitable[int], float], Awaitable[int]]


async def cancelled_as_the_step_finishes(limit: Limit, coroutine: bool = False) -> bool:
    """Whether a task cancelled in the same turn of the loop as its step finishes ends
    cancelled (rather than running on with the step's result). The step is a future, or
    (``coroutine``) a coroutine awaiting it, as every step of the package is."""
    answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    ran_on = False

    async def step() -> int:
        return await answer

    async def caller() -> None:
        nonlocal ran_on
        await limit(step() if coroutine else answer, 10)
        ran_on = True

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0)  # the caller is waiting in the limit
    answer.set_result(1)
    if coroutine:
        await asyncio.sleep(0)  # the step's task takes the answer and ends
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return task.cancelled() and not ran_on


@pytest.mark.parametrize("coroutine", [False, True], ids=["future", "coroutine"])
async def test_a_cancellation_that_comes_as_the_step_finishes_is_kept(coroutine: bool) -> None:
    assert await cancelled_as_the_step_finishes(within, coroutine)


async def test_the_result_of_a_step_cancelled_as_it_finished_is_discarded() -> None:
    answer: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
    discarded: list[list[str]] = []
    task = asyncio.ensure_future(within(answer, 10, discard=discarded.append))
    await asyncio.sleep(0)
    answer.set_result(["an open connection"])
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    if sys.version_info < (3, 12):  # from 3.12 the step runs in the caller's task, undropped
        assert discarded == [["an open connection"]]


async def test_a_second_cancellation_waits_for_the_step_to_end() -> None:
    started, cleaning, cleaned = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def step() -> None:
        started.set()
        try:
            await asyncio.sleep(10)
        finally:
            cleaning.set()
            await asyncio.sleep(0.05)  # its cleanup takes a while
            cleaned.set()

    task = asyncio.ensure_future(within(step(), 10))
    await started.wait()
    task.cancel()
    await cleaning.wait()
    task.cancel()  # during the cleanup
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert cleaned.is_set(), "within returned before its step had ended"


@pytest.mark.skipif(sys.version_info >= (3, 12),
                    reason="wait_for keeps the cancellation from Python 3.12 on")
async def test_wait_for_loses_it_before_python_3_12() -> None:
    # The flaw within exists for: were it gone, within could be wait_for.
    assert not await cancelled_as_the_step_finishes(asyncio.wait_for)
    assert not await cancelled_as_the_step_finishes(asyncio.wait_for, coroutine=True)


async def test_the_result_or_a_timeout() -> None:
    async def answer(after: float) -> int:
        await asyncio.sleep(after)
        return 42

    assert await within(answer(0), 5) == 42
    assert await within(answer(0), None) == 42
    with pytest.raises(asyncio.TimeoutError):
        await within(answer(5), 0.01)

    async def failing() -> int:
        raise ValueError("the step's own failure")

    with pytest.raises(ValueError, match="own failure"):
        await within(failing(), 5)


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
