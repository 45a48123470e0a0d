"""A watch as both an async iterator (``async for``) and a plain iterator (``for``, for
scripts without an event loop)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


class Watcher(Generic[T]):
    """The states of one watch. Nothing connects until the first state is asked for.

    Use it with ``async for`` inside an event loop, or with ``for`` in a script without one (it
    then runs its own event loop in the calling thread); one watcher cannot do both. Leaving the
    loop early (``break``) keeps the connection open until the watcher is closed — ``await
    watcher.aclose()`` / ``watcher.close()``, or ``async with`` / ``with`` — or garbage
    collected.
    """

    def __init__(self, start: Callable[[], AsyncGenerator[T, None]]) -> None:
        self._start = start
        self._iterator: AsyncGenerator[T, None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the synchronous side's own loop
        self._pending: asyncio.Task[T] | None = None
        self._closed = False

    def _iter(self) -> AsyncGenerator[T, None]:
        if self._closed:
            raise RuntimeError("lfp-swarm-lease: the watcher is closed")
        if self._iterator is None:
            self._iterator = self._start()
        return self._iterator

    # --- async ---

    def __aiter__(self) -> Watcher[T]:
        return self

    async def __anext__(self) -> T:
        if self._loop is not None:
            raise RuntimeError("lfp-swarm-lease: this watcher is iterated synchronously; "
                               "use another one with async for")
        return await self._iter().__anext__()

    async def aclose(self) -> None:
        """Ends the watch and closes its connection."""
        self._closed = True
        it, self._iterator = self._iterator, None
        if it is not None:
            await it.aclose()

    async def __aenter__(self) -> Watcher[T]:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # --- sync ---

    def __iter__(self) -> Watcher[T]:
        return self

    def __next__(self) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("lfp-swarm-lease: a watcher iterated with for would block the "
                               "running event loop; use async for")
        if self._loop is None:
            if self._iterator is not None:
                raise RuntimeError("lfp-swarm-lease: this watcher is iterated with async for")
            self._loop = asyncio.new_event_loop()
        it = self._iter()

        async def step() -> T:
            return await it.__anext__()

        self._pending = self._loop.create_task(step())
        try:
            return self._loop.run_until_complete(self._pending)
        except StopAsyncIteration:
            raise StopIteration from None
        finally:
            if self._pending.done():
                self._pending = None

    def close(self) -> None:
        """Ends a synchronous watch and closes its connection and event loop."""
        self._closed = True
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return
        it, self._iterator = self._iterator, None
        pending, self._pending = self._pending, None
        try:
            # A step interrupted (Ctrl-C) is still running: end it before closing the iterator.
            if pending is not None and not pending.done():
                pending.cancel()
                loop.run_until_complete(asyncio.gather(pending, return_exceptions=True))
            if it is not None:
                loop.run_until_complete(it.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def __enter__(self) -> Watcher[T]:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:
        # The synchronous side owns a loop: give its connection back when dropped unclosed.
        if self._loop is not None and not self._loop.is_closed() and not self._loop.is_running():
            try:
                self.close()
            except Exception:  # noqa: BLE001 - nothing to report to at collection time
                pass
