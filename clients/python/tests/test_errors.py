"""Every error path: the server's answers as LeaseApiError (against real ``serve`` processes),
no answer as LeaseConnectionError, answers that are not the contract's as ProtocolError
(against a scripted peer), and arguments refused before anything is sent."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import pytest

from lfp_swarm_lease import (
    LeaseApiError,
    LeaseClient,
    LeaseConnectionError,
    LeaseError,
    Options,
    ProtocolError,
)
from support import Processes, Request, Scripted, cli, namespace

REQUEST_ID = re.compile(r"req_[0-9a-f]{32}")


async def api_error(call: Awaitable[object]) -> LeaseApiError:
    with pytest.raises(LeaseApiError) as e:
        await call
    assert isinstance(e.value, LeaseError)
    return e.value


@pytest.fixture
async def client(procs: Processes, store: str) -> LeaseClient:
    return LeaseClient((await procs.serve(store)).base)


async def test_429_rate_limited_with_retry_after(procs: Processes, store: str) -> None:
    srv = await procs.serve(store, args=("--admission-per-minute", "1"))
    client = LeaseClient(srv.base)
    await client.create_room()
    e = await api_error(client.create_room())
    assert (e.status, e.code) == (429, "rate_limited")
    assert REQUEST_ID.fullmatch(e.request_id)
    assert e.retry_after >= 1 and e.temporary
    assert str(e).startswith("HTTP 429 rate_limited: ")
    # Renew, resign and status are never limited: a current leader cannot be stranded.
    assert (await client.status("room-abcdefgh")).status == "vacant"


async def test_404_lease_not_current_for_a_token_of_a_vacant_room(client: LeaseClient) -> None:
    rid = (await client.create_room()).election_id
    won = await client.campaign(rid, "worker-a", ttl=10)
    assert won.leader_token is not None
    await client.resign(rid, won.leader_token)
    for call in (client.renew(rid, won.leader_token, 10), client.resign(rid, won.leader_token)):
        e = await api_error(call)
        assert (e.status, e.code) == (404, "lease_not_current")
        assert e.lease_not_current and e.vacant and not e.held_by_other and not e.temporary
        assert REQUEST_ID.fullmatch(e.request_id)
        assert won.leader_token.reveal() not in str(e) + repr(e) + e.details


async def test_400_lease_not_current_when_another_term_holds_the_room(client: LeaseClient,
                                                                      ) -> None:
    rid = (await client.create_room()).election_id
    old = await client.campaign(rid, "worker-a", ttl=10)
    assert old.leader_token is not None
    await client.resign(rid, old.leader_token)
    await client.campaign(rid, "worker-b", ttl=10)
    e = await api_error(client.renew(rid, old.leader_token, 10))
    assert (e.status, e.code) == (400, "lease_not_current")
    assert e.held_by_other and not e.vacant


@pytest.mark.parametrize("candidate,ttl,metadata,code", [
    ("agent/a", 10, None, "invalid_input"),
    ("", 10, None, "invalid_input"),
    ("worker-a", 10, "m" * 1025, "invalid_input"),
    ("worker-a", 4, None, "invalid_ttl"),
    ("worker-a", 301, None, "invalid_ttl"),
])
async def test_400_refused_inputs(client: LeaseClient, candidate: str, ttl: int,
                                  metadata: str | None, code: str) -> None:
    e = await api_error(client.campaign("room-abcdefgh", candidate, ttl=ttl, metadata=metadata))
    assert (e.status, e.code) == (400, code)
    assert e.details and not e.temporary


async def test_400_a_malformed_token(client: LeaseClient) -> None:
    e = await api_error(client.renew("room-abcdefgh", "not-a-token", 10))
    assert (e.status, e.code) == (400, "invalid_input")


async def test_403_forbidden_when_elections_are_off(procs: Processes, store: str) -> None:
    srv = await procs.serve(store, args=("--elections", "off"))
    client = LeaseClient(srv.base)
    e = await api_error(client.create_room())
    assert (e.status, e.code) == (403, "forbidden") and not e.temporary
    with pytest.raises(LeaseApiError) as watched:
        async with client.watch_room("room-abcdefgh") as watcher:
            await asyncio.wait_for(watcher.__anext__(), 5)
    assert watched.value.code == "forbidden", "a permanent answer ends the watch at once"


async def test_409_capacity_exceeded_with_retry_after(procs: Processes, store: str) -> None:
    srv = await procs.serve(store, args=("--max-active-rooms", "1"))
    client = LeaseClient(srv.base)
    await client.campaign("room-one-abc", "worker-a", ttl=30)
    e = await api_error(client.campaign("room-two-abc", "worker-a", ttl=30))
    assert (e.status, e.code) == (409, "capacity_exceeded")
    assert e.retry_after > 0 and e.temporary


async def test_503_not_ready_from_a_store_that_cannot_be_read(procs: Processes,
                                                              tmp_path: Path) -> None:
    ns = namespace()
    store = f"file:{tmp_path}"
    await cli(store, ns, "a", "init")
    lease = next(tmp_path.glob("*.lease.json"))
    lease.write_text("{broken")
    client = LeaseClient((await procs.serve(store, ns=ns)).base)
    assert (await client.healthz()).status == "ok"
    e = await api_error(client.readyz())
    assert (e.status, e.code) == (503, "not_ready") and e.temporary
    assert REQUEST_ID.fullmatch(e.request_id)


async def test_404_no_namespace_on_a_serve_without_one(client: LeaseClient) -> None:
    e = await api_error(client.state())
    assert (e.status, e.code) == (404, "no_namespace")
    assert "namespace" in e.details + e.error


async def test_no_answer_is_a_connection_error_naming_the_operation() -> None:
    client = LeaseClient("http://127.0.0.1:1", Options(request_timeout=2))
    with pytest.raises(LeaseConnectionError, match=r"lfp-swarm-lease: healthz http://127.0.0.1:1"):
        await client.healthz()


@pytest.fixture
async def peer() -> AsyncIterator[list[Scripted]]:
    made: list[Scripted] = []
    yield made
    for s in made:
        await s.close()


async def test_an_answer_that_never_comes_ends_at_the_request_timeout(peer: list[Scripted],
                                                                      ) -> None:
    async def silent(req: Request) -> None:
        return

    srv = await Scripted(silent).start()
    peer.append(srv)
    client = LeaseClient(srv.base, Options(request_timeout=0.3))
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(LeaseConnectionError, match=r"status .*request timeout \(0.3 s\)"):
        await client.status("room-abcdefgh")
    assert loop.time() - began < 2


BAD_ANSWERS = {
    "not JSON": (200, "application/json", b"<html>", "is not JSON"),
    "not the contract's object": (200, "application/json", b'{"election_id": "x"}',
                                  "field 'status' is missing"),
    "null": (200, "application/json", b"null", "want a JSON object"),
    "over the bound": (200, "application/json", b'{"a":"' + b"x" * (1 << 20) + b'"}',
                       "over 1048576 bytes"),
    "a leader without a token": (200, "application/json", (
        b'{"status":"leader","election_id":"room-abcdefgh","leader":{"candidate_id":"a",'
        b'"term":1,"expires_at":"2026-01-01T00:00:00Z"}}'), "without a leader token"),
    "not HTTP": (None, "", b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x answer"),
}


@pytest.mark.parametrize("answer", list(BAD_ANSWERS.values()), ids=list(BAD_ANSWERS))
async def test_answers_that_are_not_the_contracts_are_protocol_errors(
        peer: list[Scripted], answer: tuple[int | None, str, bytes, str]) -> None:
    status, content_type, body, message = answer

    async def handler(req: Request) -> None:
        if status is None:
            req.write(body)
        else:
            req.head(status, content_type, {"X-Request-Id": "req_x"}, length=len(body))
            req.write(body)
        req.close()

    srv = await Scripted(handler).start()
    peer.append(srv)
    with pytest.raises(ProtocolError, match=message):
        await LeaseClient(srv.base).campaign("room-abcdefgh", "a")


async def test_a_proxys_answer_has_no_code_and_is_temporary(peer: list[Scripted]) -> None:
    async def handler(req: Request) -> None:
        req.head(502, "text/plain", {"X-Request-Id": "req_b", "Retry-After": "7"}, length=11)
        req.write("Bad Gateway")
        req.close()

    srv = await Scripted(handler).start()
    peer.append(srv)
    e = await api_error(LeaseClient(srv.base).status("room-abcdefgh"))
    assert (e.status, e.code, e.error, e.request_id) == (502, "", "Bad Gateway", "req_b")
    assert e.retry_after == 7 and e.temporary
    assert str(e) == "HTTP 502: Bad Gateway [request req_b]"


async def test_arguments_are_refused_before_anything_is_sent(peer: list[Scripted]) -> None:
    async def handler(req: Request) -> None:
        req.close()

    srv = await Scripted(handler).start()
    peer.append(srv)
    client = LeaseClient(srv.base)
    for bad in ("short", "bad id!", "x" * 65, "../../etc"):
        with pytest.raises(ValueError, match="election id"):
            await client.status(bad)
        with pytest.raises(ValueError, match="election id"):
            client.watch_room(bad)
        with pytest.raises(ValueError, match="election id"):
            client.hold(bad, "a")
    with pytest.raises(ValueError, match="whole number of seconds"):
        await client.campaign("room-abcdefgh", "a", ttl=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ttl 2"):
        client.hold("room-abcdefgh", "a", ttl=2)
    with pytest.raises(ValueError, match="below the TTL minus its safety margin"):
        client.hold("room-abcdefgh", "a", ttl=5, renew_interval=4, stop_before=0.6)
    with pytest.raises(ValueError, match="stop_before"):
        client.hold("room-abcdefgh", "a", ttl=30, stop_before=-1)
    assert srv.requests == [], "nothing was sent"
