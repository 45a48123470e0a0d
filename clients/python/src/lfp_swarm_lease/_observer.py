"""RemoteLeaseObserver: follows one election through a controller's ``GET /v1/events``."""

from __future__ import annotations

import asyncio
import logging

from . import _http
from ._errors import InitialTimeoutError, NoHolderError
from ._models import State, state_changed
from ._options import Options, base_url_of
from ._stream import StreamSpec, watch_stream
from ._timeout import within
from ._watcher import Watcher
from ._wire import decode


class RemoteLeaseObserver:
    """Follows one election through the controller endpoints at a base URL: a ``run``
    replica, ``serve`` with a namespace, or a Swarm service's VIP in front of the replicas. It
    holds only configuration: every watch has its own connections and de-duplication.

    A watch waits up to ``initial_timeout`` (60 s) for the first state, because a client usually
    starts together with the controllers it observes. Once it has a state it reconnects
    forever, with jittered exponential back-off, because a controller restart or a VIP moving
    the client to another replica is routine, not an error. Every connection starts with the
    complete current state, so nothing is resumed after a reconnect; instead a watch yields a
    state only when it differs from the last one it yielded in existence, holder (id, node,
    task), liveness or fence: a replica replaying the state the consumer already has is
    invisible to it.

    Trust model: states are what a controller observed in the store, and hints. Only a term's
    own deadline authorises leader work; a consumer acting on leadership compares fences.
    """

    def __init__(self, base_url: str, options: Options | None = None) -> None:
        """Use :meth:`connect`."""
        self._events = _http.url_of(base_url_of(base_url), "v1", "events")
        self._options = options or Options()

    @classmethod
    def connect(cls, base_url: str, options: Options | None = None) -> RemoteLeaseObserver:
        """An observer of the controller at ``base_url`` (``"http://leases:8080"``; a path
        prefix of a reverse proxy is kept). It connects nothing yet: a watch does. An invalid URL
        raises ``ValueError`` here."""
        return cls(base_url, options)

    def watch(self) -> Watcher[State]:
        """The states of the election, each different from the one before it: first the
        current state, then every change of holder, fence or liveness (timestamps are not
        compared, so renewals are no change).

        Before the first state, failures are retried until the initial timeout, which raises
        :class:`InitialTimeoutError` (``__cause__``: the last failure). After it the watch
        reconnects forever; failures from then on go to the logger, including events that are
        not the contract's State (never yielded: the stream is dropped and reopened).
        """
        spec = self._spec(self._options.initial_timeout)
        return Watcher(lambda: watch_stream(spec))

    async def wait_for_holder(self, timeout: float | None = None) -> State:
        """The first state with a live holder (:attr:`State.has_holder`), skipping states
        without one, waiting at most ``timeout`` seconds (``None``: no limit but the initial
        timeout). Without any state in time it raises :class:`InitialTimeoutError`; with states
        but no holder, :class:`NoHolderError` carrying the last state."""
        initial = self._options.initial_timeout
        if timeout is not None:
            if not timeout > 0:
                raise ValueError(f"lfp-swarm-lease: wait_for_holder: timeout {timeout!r} must be "
                                 "positive")
            initial = min(initial, timeout)
        last: list[State] = []
        stream = watch_stream(self._spec(initial))

        async def first_holder() -> State:
            async for state in stream:
                if state.has_holder:
                    return state
                last[:] = [state]
            raise AssertionError("a watch ends only by raising")  # pragma: no cover

        try:
            return await within(first_holder(), timeout)
        except asyncio.TimeoutError:
            if not last:
                raise InitialTimeoutError(timeout or 0.0) from None
            raise NoHolderError(timeout, last[0]) from None
        finally:
            await stream.aclose()

    def _spec(self, initial_timeout: float | None) -> StreamSpec[State]:
        return StreamSpec(
            url=self._events,
            options=self._options,
            initial_timeout=initial_timeout,
            server="an lfp-swarm-lease controller",
            state_events=frozenset({"current", "change", "message"}),
            decode=lambda data, where: decode(State, data, f"{where}: not a State"),
            same=lambda a, b: not state_changed(a, b),
            # Every answer is retried: a wrong one comes from a replica or proxy in a bad moment,
            # and the Swarm VIP may send the next connection to another replica.
            end_on_permanent_answer=False,
            # too_many_clients is one replica's limit ("retry later or connect to another
            # replica"): its Retry-After need not hold the observer longer than a back-off.
            cap_retry_after=True,
            # A controller ends a stream only when it stops or the client lags: worth a warning.
            reconnect_level=logging.WARNING,
            reconnect_message="lfp-swarm-lease: event stream failed",
        )
