"""One step within a time limit, cancellable from outside on every supported Python."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

R = TypeVar("R")


async def within(step: Awaitable[R], seconds: float | None, *,
                 discard: Callable[[R], object] | None = None) -> R:
    """``asyncio.wait_for(step, seconds)``: the step's result, or :class:`asyncio.TimeoutError`
    once ``seconds`` have passed (the step then cancelled); ``None``: no limit.

    Before Python 3.12, ``wait_for`` loses a cancellation of its caller that arrives as the step
    finishes: it returns the step's result, and the task that was told to stop runs on — a watch
    that is never closed, a renewal loop that outlives its term. Here the caller's cancellation
    propagates (unless the step itself swallows it): the step is cancelled with it, and a
    result it had already produced is given to ``discard`` (to close what it holds)."""
    if seconds is None:  # awaited in the caller's task, which any cancellation reaches
        return await step
    if sys.version_info >= (3, 12):  # wait_for is built on asyncio.timeout there
        return await asyncio.wait_for(step, seconds)
    task = asyncio.ensure_future(step)
    try:
        await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        await _end(task)
        if discard is not None and not task.cancelled() and task.exception() is None:
            discard(task.result())
        raise
    if not task.done():
        task.cancel()
        if await _end(task):
            raise asyncio.CancelledError
        if task.cancelled():
            raise asyncio.TimeoutError
    return task.result()


async def _end(task: asyncio.Future[R]) -> bool:
    """Waits for a cancelled step to end, and says whether the caller was cancelled meanwhile:
    a further cancellation does not cut the wait short (the step is ending already)."""
    again = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            again = True
    return again
