"""One step within a time limit, cancellable from outside on every supported Python."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

R = TypeVar("R")


async def within(step: Awaitable[R], seconds: float | None) -> R:
    """``asyncio.wait_for(step, seconds)``: the step's result, or :class:`asyncio.TimeoutError`
    once ``seconds`` have passed (the step then cancelled); ``None``: no limit.

    Before Python 3.12, ``wait_for`` loses a cancellation of its caller that arrives as the step
    finishes: it returns the step's result, and the task that was told to stop runs on — a watch
    that is never closed, a renewal loop that outlives its term. Here the caller's cancellation
    always propagates (the step is cancelled with it and its result, if any, dropped)."""
    if sys.version_info >= (3, 12):  # wait_for is built on asyncio.timeout there
        return await asyncio.wait_for(step, seconds)
    task = asyncio.ensure_future(step)
    try:
        await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if task.cancelled():
            raise asyncio.TimeoutError
    return task.result()
