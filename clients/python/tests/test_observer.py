"""RemoteLeaseObserver against real ``serve`` and ``run`` processes on a file store: changes
made by other processes, a server restart, replicas behind a VIP, a leader SIGKILLed."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from lfp_swarm_lease import (
    InitialTimeoutError,
    LeaseClient,
    NoHolderError,
    Options,
    RemoteLeaseObserver,
    State,
)
from lfp_swarm_lease._models import state_changed
from support import Processes, Proxy, cli, metric, namespace, poll_until

FAST = Options(min_backoff=0.05, max_backoff=0.2)


@dataclass
class Collected:
    """States read from a watch in the background."""

    states: list[State] = field(default_factory=list)
    failure: BaseException | None = None
    task: asyncio.Task[None] | None = None

    async def stop(self) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def collect(observer: RemoteLeaseObserver) -> Collected:
    c = Collected()

    async def run() -> None:
        try:
            async with observer.watch() as watcher:
                async for s in watcher:
                    c.states.append(s)
        except Exception as e:  # noqa: BLE001 - recorded for the test to assert on
            c.failure = e

    c.task = asyncio.ensure_future(run())
    return c


def assert_no_replays(states: list[State]) -> None:
    for i in range(1, len(states)):
        assert state_changed(states[i - 1], states[i]), f"state {i} replays state {i - 1}: {states}"


@pytest.fixture
async def proxy() -> AsyncIterator[list[Proxy]]:
    made: list[Proxy] = []
    yield made
    for p in made:
        await p.close()


async def test_first_state_then_a_change_made_by_another_process(procs: Processes,
                                                                 store: str) -> None:
    ns = namespace()
    srv = await procs.serve(store, ns=ns)
    w = collect(RemoteLeaseObserver.connect(srv.base, FAST))
    await poll_until(10, "the first state", lambda: len(w.states) >= 1)
    assert w.states[0].namespace == ns
    assert w.states[0].acquired is False and not w.states[0].has_holder
    fence = await cli(store, ns, "alice", "try-acquire")
    await poll_until(10, "the acquisition", lambda: any(s.holder_id == "alice" for s in w.states))
    assert w.states[-1].fence == int(fence) and w.states[-1].has_holder
    await w.stop()
    assert w.failure is None


async def test_a_server_killed_and_restarted_replays_nothing(procs: Processes, store: str) -> None:
    ns = namespace()
    await cli(store, ns, "alice", "try-acquire")
    srv = await procs.serve(store, ns=ns)
    w = collect(RemoteLeaseObserver.connect(srv.base, FAST))
    await poll_until(10, "the first state", lambda: len(w.states) == 1)
    await srv.stop(signal.SIGKILL)
    srv = await procs.serve(store, ns=ns, listen=srv.addr)
    # The restarted server's first event is the same state: it must not be yielded again. A
    # change after it must arrive.
    await poll_until(10, "the reconnect", lambda: sse_clients(srv.base, 1))
    await cli(store, ns, "alice", "release", str(w.states[0].fence))
    await poll_until(10, "the release", lambda: len(w.states) >= 2)
    assert len(w.states) == 2, w.states
    assert w.states[1].acquired is False
    assert_no_replays(w.states)
    await w.stop()


async def test_two_servers_behind_a_vip_switch_without_duplicates(
        procs: Processes, store: str, proxy: list[Proxy]) -> None:
    ns = namespace()
    await cli(store, ns, "alice", "try-acquire")
    one = await procs.serve(store, ns=ns)
    two = await procs.serve(store, ns=ns)
    vip = await Proxy([one, two]).start()
    proxy.append(vip)
    w = collect(RemoteLeaseObserver.connect(vip.base, FAST))
    await poll_until(10, "the first state", lambda: len(w.states) == 1)
    await one.stop(signal.SIGKILL)
    await poll_until(10, "a connection to the second server", lambda: sse_clients(two.base, 1))
    await cli(store, ns, "alice", "release", str(w.states[0].fence))
    await poll_until(10, "the release", lambda: len(w.states) >= 2)
    assert len(w.states) == 2, w.states
    assert vip.served.get(two.base, 0) >= 1
    assert_no_replays(w.states)
    await w.stop()


async def test_follows_run_replicas_through_a_leader_sigkill(
        procs: Processes, store: str, proxy: list[Proxy]) -> None:
    ns = namespace()
    a = await procs.run(store, ns, "replica-a")
    client_a = LeaseClient(a.base, FAST)
    await poll_until(10, "replica-a leads", lambda: _holder(client_a, "replica-a"))
    b = await procs.run(store, ns, "replica-b")
    vip = await Proxy([a, b]).start()
    proxy.append(vip)
    w = collect(RemoteLeaseObserver.connect(vip.base, FAST))
    await poll_until(10, "the first state", lambda: len(w.states) >= 1)
    assert w.states[0].holder_id == "replica-a" and w.states[0].has_holder
    # No release: replica-b takes over once the lease (TTL 3 s) expires.
    await a.stop(signal.SIGKILL)
    await poll_until(20, "replica-b leads",
                     lambda: bool(w.states) and w.states[-1].holder_id == "replica-b"
                     and w.states[-1].has_holder)
    assert w.states[-1].fence > w.states[0].fence
    assert vip.served.get(b.base, 0) >= 1
    assert_no_replays(w.states)
    info = await LeaseClient(b.base).info()
    assert (info.namespace, info.holder_id) == (ns, "replica-b")
    await w.stop()
    assert w.failure is None


async def test_gives_up_after_the_initial_wait_when_nothing_answers() -> None:
    observer = RemoteLeaseObserver.connect(f"http://127.0.0.1:{closed_port()}",
                                           Options(initial_timeout=1, min_backoff=0.05,
                                                   max_backoff=0.2))
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(InitialTimeoutError) as e:
        async for _ in observer.watch():
            pytest.fail("a state from nowhere")
    took = loop.time() - began
    assert 0.95 <= took < 3, f"gave up after {took:.3f} s"
    assert e.value.timeout == 1
    assert isinstance(e.value.__cause__, ConnectionError), "the last failure is the cause"


def test_the_default_initial_wait_is_sixty_seconds() -> None:
    # The Go and TypeScript clients' default; the mechanism is tested with shorter ones.
    assert Options().initial_timeout == 60


async def test_closing_the_watch_closes_the_stream_on_the_server(procs: Processes,
                                                                 store: str) -> None:
    srv = await procs.serve(store, ns=namespace())
    watcher = RemoteLeaseObserver.connect(srv.base, FAST).watch()
    await watcher.__anext__()
    assert await metric(srv.base, "lfp_swarm_lease_sse_clients") == 1
    await watcher.aclose()
    await poll_until(5, "the server sees the stream closed", lambda: sse_clients(srv.base, 0))


async def test_wait_for_holder_skips_states_without_one(procs: Processes, store: str) -> None:
    ns = namespace()
    srv = await procs.serve(store, ns=ns)
    waiting = asyncio.ensure_future(
        RemoteLeaseObserver.connect(srv.base, FAST).wait_for_holder(10))
    await poll_until(10, "the observer connected", lambda: sse_clients(srv.base, 1))
    assert not waiting.done(), "a vacant election is no holder"
    await cli(store, ns, "bob", "try-acquire")
    state = await asyncio.wait_for(waiting, 10)
    assert (state.holder_id, state.acquired) == ("bob", True)


async def test_wait_for_holder_times_out_with_the_last_state(procs: Processes, store: str) -> None:
    ns = namespace()
    srv = await procs.serve(store, ns=ns)
    with pytest.raises(NoHolderError) as e:
        await RemoteLeaseObserver.connect(srv.base, FAST).wait_for_holder(0.5)
    assert e.value.last_state.namespace == ns and not e.value.last_state.has_holder
    with pytest.raises(InitialTimeoutError):
        await RemoteLeaseObserver.connect(f"http://127.0.0.1:{closed_port()}",
                                          FAST).wait_for_holder(0.5)


async def test_controller_endpoints_of_run(procs: Processes, store: str) -> None:
    ns = namespace()
    r = await procs.run(store, ns, "replica-a")
    client = LeaseClient(r.base)
    await poll_until(10, "replica-a leads", lambda: _holder(client, "replica-a"))
    assert (await client.healthz()).status == "ok"
    assert (await client.readyz()).status == "ready"
    info = await client.info()
    assert (info.namespace, info.holder_id) == (ns, "replica-a")
    state = await client.state()
    assert state.has_holder and state.fence > 0 and state.ttl_ms == 3000
    assert state.acquired_at is not None and state.expires_at is not None
    assert state.expires_at > state.acquired_at


def test_the_synchronous_iterator_for_scripts(binary: str, tmp_path: object) -> None:
    # A script without an event loop: `for state in watcher`. The server runs on a loop of its
    # own thread, as another process would.
    ns = namespace()
    store = f"file:{tmp_path}"
    procs = Processes()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def on_loop(coro: object) -> object:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(30)  # type: ignore[arg-type]

    try:
        srv = on_loop(procs.serve(store, ns=ns))
        assert hasattr(srv, "base")
        with RemoteLeaseObserver.connect(srv.base, FAST).watch() as watcher:
            first = next(watcher)
            assert first.namespace == ns and not first.has_holder
            on_loop(cli(store, ns, "carol", "try-acquire"))
            second = next(watcher)
            assert second.holder_id == "carol"
        with pytest.raises(RuntimeError, match="closed"):
            next(watcher)
    finally:
        on_loop(procs.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


async def test_the_synchronous_iterator_refuses_a_running_loop() -> None:
    watcher = RemoteLeaseObserver.connect("http://127.0.0.1:1").watch()
    with pytest.raises(RuntimeError, match="async for"):
        next(watcher)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def sse_clients(base: str, n: int) -> bool:
    """Whether the server counts n clients of /v1/events."""
    return await metric(base, "lfp_swarm_lease_sse_clients") == n


async def _holder(client: LeaseClient, holder: str) -> bool:
    s = await client.state()
    return s.holder_id == holder and s.has_holder
