"""Edge cases of the event-stream watches, against scripted misbehaving servers on loopback:
replays, events that are not the contract's object, oversized events, silent and unanswered
connections, wrong answers, Retry-After, ``retry:``, line endings and body framings."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import pytest

from lfp_swarm_lease import (
    InitialTimeoutError,
    LeaseApiError,
    LeaseClient,
    Options,
    ProtocolError,
    RemoteLeaseObserver,
    State,
    Watcher,
)
from support import Request, Scripted, frame, poll_until, state_of, vacant_frame

T = TypeVar("T")
FAST = Options(min_backoff=0.02, max_backoff=0.1, jitter=lambda: 0.0)


@pytest.fixture
async def scripted() -> AsyncIterator[Callable[[Callable[[Request], Awaitable[None]]],
                                               Awaitable[Scripted]]]:
    servers: list[Scripted] = []

    async def start(handler: Callable[[Request], Awaitable[None]]) -> Scripted:
        s = await Scripted(handler).start()
        servers.append(s)
        return s

    yield start
    for s in servers:
        await s.close()


Start = Callable[[Callable[[Request], Awaitable[None]]], Awaitable[Scripted]]


async def anext_of(watcher: Watcher[T]) -> T:
    async with watcher:
        return await watcher.__anext__()


async def take(observer: RemoteLeaseObserver, n: int, timeout: float = 10) -> list[State]:
    """The first n states of a watch; then the watch is closed."""
    states: list[State] = []

    async def run() -> None:
        async with observer.watch() as watcher:
            async for s in watcher:
                states.append(s)
                if len(states) == n:
                    return

    await asyncio.wait_for(run(), timeout)
    return states


async def test_renewals_are_no_change_and_a_replay_after_a_reconnect_yields_nothing(
        scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.events()
        if req.n == 0:
            renewed = state_of("a", 5, renewed_at="2026-01-01T00:00:01Z")
            req.write(frame("current", state_of("a", 5)) + frame("change", renewed)
                      + frame("change", state_of("b", 6)))
        else:  # the next connection replays the last state, then changes
            req.write(frame("current", state_of("b", 6)) + frame("change", state_of("", 6)))
        req.close()

    srv = await scripted(handler)
    states = await take(RemoteLeaseObserver.connect(srv.base, FAST), 3)
    assert [(s.holder_id, s.fence) for s in states] == [("a", 5), ("b", 6), ("", 6)]
    assert len(srv.requests) == 2
    assert srv.requests[0].path == "/v1/events"
    assert srv.requests[0].headers["accept"] == "text/event-stream"


BAD_DATA = {
    "null": "null",
    "a number": "42",
    "a string": '"state"',
    "an array": "[]",
    "not JSON": "{broken",
    "a missing field": json.dumps({k: v for k, v in state_of("x", 1).items() if k != "fence"}),
    "a mistyped field": json.dumps({**state_of("x", 1), "fence": "1"}),
    "a boolean for an integer": json.dumps({**state_of("x", 1), "fence": True}),
    "a negative fence": json.dumps(state_of("x", -1)),
    "null for a string": json.dumps(state_of("x", 1, holder_id=None)),
}


@pytest.mark.parametrize("data", list(BAD_DATA.values()), ids=list(BAD_DATA))
async def test_an_event_that_is_not_a_state_is_never_yielded_and_the_stream_reconnects(
        scripted: Start, data: str, caplog: pytest.LogCaptureFixture) -> None:
    async def handler(req: Request) -> None:
        req.events()
        if req.n == 0:
            # An unknown event type is skipped; the bad state ends the connection, so the state
            # after it on the same stream is never read.
            req.write(': hello\n\nevent: future\ndata: {"x":1}\n\n'
                      + frame("current", state_of("a", 1))
                      + f"event: change\ndata: {data}\n\n" + frame("change", state_of("z", 9)))
            await req.flush()  # and the stream stays open: the client must drop it itself
        else:
            req.write(frame("current", state_of("b", 2)))
            req.close()

    srv = await scripted(handler)
    caplog.set_level(logging.WARNING, logger="lfp_swarm_lease")
    states = await take(RemoteLeaseObserver.connect(srv.base, FAST), 2)
    assert [(s.holder_id, s.fence) for s in states] == [("a", 1), ("b", 2)]
    assert len(srv.requests) == 2, "the bad event made it reconnect"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "event 'change'" in logged, logged


async def test_only_bad_events_end_in_the_initial_timeout_naming_the_event(scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.events()
        req.write("event: current\ndata: null\n\n")
        req.close()

    srv = await scripted(handler)
    observer = RemoteLeaseObserver.connect(srv.base, Options(initial_timeout=0.5,
                                                             min_backoff=0.05, max_backoff=0.1))
    with pytest.raises(InitialTimeoutError) as e:
        await take(observer, 1)
    assert isinstance(e.value.__cause__, ProtocolError)
    assert "event 'current'" in str(e.value.__cause__)
    assert "want a JSON object, got null" in str(e.value)
    assert len(srv.requests) >= 3, "it retried until the initial timeout"


@pytest.mark.parametrize("shape", ["one line", "many data lines"])
async def test_an_event_over_one_mebibyte_is_dropped(scripted: Start, shape: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    async def handler(req: Request) -> None:
        req.events()
        if req.n == 0:
            req.write(frame("current", state_of("a", 1)))
            if shape == "one line":
                req.write("data: " + "x" * (1 << 20) + "\n\n")
            else:
                req.write(("data: " + "x" * 1000 + "\n") * 1100 + "\n")
            req.write(frame("change", state_of("never", 7)))
            await req.flush()
        else:
            req.write(frame("current", state_of("b", 2)))
            req.close()

    srv = await scripted(handler)
    caplog.set_level(logging.WARNING, logger="lfp_swarm_lease")
    states = await take(RemoteLeaseObserver.connect(srv.base, FAST), 2)
    assert [s.holder_id for s in states] == ["a", "b"]
    assert "over 1048576 bytes" in caplog.text


async def test_a_silent_stream_or_an_unanswered_request_is_dropped_after_the_idle_timeout(
        scripted: Start) -> None:
    async def handler(req: Request) -> None:
        if req.n == 0:
            return  # accepted, never answered
        req.events()
        if req.n == 1:
            req.write(frame("current", state_of("a", 1)))  # then silence
        else:
            req.write(frame("current", state_of("b", 2)))
            req.close()

    srv = await scripted(handler)
    loop = asyncio.get_running_loop()
    began = loop.time()
    states = await take(RemoteLeaseObserver.connect(
        srv.base, Options(min_backoff=0.02, max_backoff=0.1, idle_timeout=0.3)), 2)
    took = loop.time() - began
    assert [s.holder_id for s in states] == ["a", "b"]
    assert len(srv.requests) == 3
    assert 0.55 <= took < 3, f"two idle timeouts of 0.3 s took {took:.3f} s"


async def test_keep_alive_comments_keep_a_stream_open(scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.events()
        req.write(frame("current", state_of("a", 1)))
        for _ in range(6):  # 0.6 s of keep-alives, twice the idle timeout
            req.write(": keep-alive\n\n")
            await req.flush()
            await asyncio.sleep(0.1)
        req.write(frame("change", state_of("b", 2)))
        req.close()

    srv = await scripted(handler)
    states = await take(RemoteLeaseObserver.connect(
        srv.base, Options(min_backoff=0.02, max_backoff=0.1, idle_timeout=0.3)), 2)
    assert [s.holder_id for s in states] == ["a", "b"]
    assert len(srv.requests) == 1


async def test_the_observer_retries_every_answer_with_retry_after_capped(scripted: Start) -> None:
    async def handler(req: Request) -> None:
        if req.n == 0:
            req.json(503, {"error": "busy", "code": "too_many_clients", "details": "",
                           "request_id": "req_1"}, {"Retry-After": "30"})
        elif req.n == 1:
            req.head(200, "text/html", length=20)
            req.write("<html>a proxy</html>")
        elif req.n == 2:
            req.head(404, "text/plain", length=19)
            req.write("no healthy upstream")
        else:
            req.events()
            req.write(frame("current", state_of("a", 1)))
        req.close()

    srv = await scripted(handler)
    states = await take(RemoteLeaseObserver.connect(srv.base, FAST), 1)
    assert states[0].holder_id == "a"
    assert len(srv.requests) == 4
    wait = srv.arrivals[1] - srv.arrivals[0]
    assert wait < 1, f"waited {wait:.3f} s after a Retry-After of 30 s (max back-off 0.1 s)"


async def test_a_room_watch_waits_out_retry_after_and_stops_at_a_permanent_answer(
        scripted: Start) -> None:
    async def handler(req: Request) -> None:
        if "forbidden" in req.path:
            req.json(403, {"error": "elections are disabled", "code": "forbidden", "details": "",
                           "request_id": "req_3"})
        elif req.n == 0:
            req.json(429, {"error": "slow down", "code": "rate_limited", "details": "",
                           "request_id": "req_2"}, {"Retry-After": "1"})
        else:
            req.events()
            req.write(frame("state", vacant_frame("room-abcdefgh")))
        req.close()

    srv = await scripted(handler)
    client = LeaseClient(srv.base, FAST)
    async with client.watch_room("room-abcdefgh") as watcher:
        first = await watcher.__anext__()
    assert first.status == "vacant" and first.leader is None
    wait = srv.arrivals[1] - srv.arrivals[0]
    assert wait >= 0.99, f"reconnected {wait:.3f} s after a Retry-After of 1 s"
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(LeaseApiError) as e:
        await asyncio.wait_for(anext_of(client.watch_room("forbidden-room")), 5)
    assert (e.value.status, e.value.code, e.value.request_id) == (403, "forbidden", "req_3")
    assert loop.time() - began < 1, "a permanent answer is not retried"
    assert len(srv.requests) == 3


async def test_a_servers_retry_field_sets_the_reconnect_floor_capped_by_max_backoff(
        scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.events()
        retry = {0: 700, 1: 3_600_000}.get(req.n)
        if retry is not None:
            req.write(f"retry: {retry}\n\n")
        req.write(frame("current", state_of("a", 1) if req.n < 2 else state_of("b", 2)))
        req.close()

    srv = await scripted(handler)
    states = await take(RemoteLeaseObserver.connect(
        srv.base, Options(min_backoff=0.02, max_backoff=1.5, jitter=lambda: 0.0)), 2)
    assert [s.holder_id for s in states] == ["a", "b"]
    first, second = (srv.arrivals[1] - srv.arrivals[0], srv.arrivals[2] - srv.arrivals[1])
    assert 0.69 <= first < 1.2, f"reconnected {first:.3f} s after retry: 700"
    assert 1.49 <= second < 2.2, f"reconnected {second:.3f} s after retry: 3600000 (max 1.5 s)"


async def test_chunked_one_byte_at_a_time_with_bare_cr_line_endings(scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.head(200, "text/event-stream; charset=utf-8", chunked=True)
        body = ("\ufeff" + frame("current", state_of("a", 1)) + frame("change", state_of("b", 2))
                ).replace("\n", "\r").encode()
        for i in range(len(body)):
            req.write(b"1\r\n" + body[i:i + 1] + b"\r\n")
            if i % 50 == 0:
                await req.flush()
        await req.flush()  # the stream stays open: the events must arrive without its end

    srv = await scripted(handler)
    states = await take(RemoteLeaseObserver.connect(srv.base, FAST), 2)
    assert [s.holder_id for s in states] == ["a", "b"]
    assert len(srv.requests) == 1


async def test_a_stream_ending_inside_an_event_discards_it(scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.events()
        if req.n == 0:
            req.write(frame("current", state_of("a", 1)) + 'event: change\ndata: {"namesp')
        else:
            req.write(frame("current", state_of("b", 2)))
        req.close()

    srv = await scripted(handler)
    states = await take(RemoteLeaseObserver.connect(srv.base, FAST), 2)
    assert [s.holder_id for s in states] == ["a", "b"]


async def test_a_path_prefix_of_the_base_url_is_kept(scripted: Start) -> None:
    async def handler(req: Request) -> None:
        req.events()
        req.write(frame("current", state_of("a", 1)))
        req.close()

    srv = await scripted(handler)
    await take(RemoteLeaseObserver.connect(f"{srv.base}/leases/", FAST), 1)
    assert [r.path for r in srv.requests] == ["/leases/v1/events"]


async def test_closing_before_the_first_state_ends_the_watch_at_once(scripted: Start) -> None:
    async def never(req: Request) -> None:
        return

    srv = await scripted(never)
    watcher = RemoteLeaseObserver.connect(srv.base, FAST).watch()
    pending = asyncio.ensure_future(watcher.__anext__())
    await poll_until(5, "the request arrived", lambda: len(srv.requests) == 1)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    loop = asyncio.get_running_loop()
    began = loop.time()
    await watcher.aclose()
    assert loop.time() - began < 1, "closing waited for a timeout"
    with pytest.raises(RuntimeError, match="closed"):
        await watcher.__anext__()


async def test_the_initial_timeout_counts_an_unanswered_request(scripted: Start) -> None:
    async def never(req: Request) -> None:
        return

    srv = await scripted(never)
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(InitialTimeoutError) as e:
        await take(RemoteLeaseObserver.connect(srv.base, Options(initial_timeout=0.4)), 1)
    took = loop.time() - began
    assert 0.39 <= took < 1.5, f"gave up after {took:.3f} s"
    assert e.value.timeout == 0.4
    assert "no response (the initial timeout passed)" in str(e.value)
