"""The elections API of LeaseClient against a real ``serve``, on each store that runs without
Docker (the file store and the memory store)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from lfp_swarm_lease import LeaseClient, Options, WatchFrame
from support import Processes, Proxy

STORES = ["file", "memory"]


async def serve_on(procs: Processes, kind: str, tmp_path: Path) -> LeaseClient:
    store = f"file:{tmp_path}" if kind == "file" else "memory"
    srv = await procs.serve(store)
    return LeaseClient(srv.base, Options(min_backoff=0.05, max_backoff=0.2))


@pytest.mark.parametrize("kind", STORES)
async def test_round_trip(procs: Processes, tmp_path: Path, kind: str) -> None:
    client = await serve_on(procs, kind, tmp_path)
    room = await client.create_room()
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", room.election_id)
    assert room.campaign_path == f"/elections/{room.election_id}/campaign"
    assert room.watch_path == f"/elections/{room.election_id}/watch"
    rid = room.election_id

    a = await client.campaign(rid, "worker-a", ttl=10, metadata="a" * 1024)
    assert a.is_leader and a.leader.candidate_id == "worker-a" and a.leader.metadata == "a" * 1024
    assert a.leader_token is not None and len(a.leader_token.reveal()) == 43
    assert a.renew_after_ms == 5000 and a.retry_after_ms is None

    b = await client.campaign(rid, "worker-b", ttl=10)
    assert b.status == "follower" and b.leader_token is None
    assert (b.leader.candidate_id, b.leader.term) == ("worker-a", a.leader.term)
    assert b.retry_after_ms is not None and 0 < b.retry_after_ms <= 10_000

    again = await client.campaign(rid, "worker-a", ttl=10)
    assert again.status == "follower", "a live leader campaigning again gets no second token"

    status = await client.status(rid)
    assert status.status == "leader" and status.leader is not None
    assert (status.leader.candidate_id, status.leader.term) == ("worker-a", a.leader.term)

    renewed = await client.renew(rid, a.leader_token, 20)
    assert renewed.is_leader and renewed.leader.term == a.leader.term
    assert renewed.leader_token == a.leader_token
    assert renewed.leader.expires_at > a.leader.expires_at

    resigned = await client.resign(rid, a.leader_token)
    assert (resigned.status, resigned.previous_term) == ("vacant", a.leader.term)
    vacant = await client.status(rid)
    assert (vacant.status, vacant.leader, vacant.retry_after_ms) == ("vacant", None, 0)

    b2 = await client.campaign(rid, "worker-b", ttl=10)
    assert b2.is_leader and b2.leader.term > a.leader.term
    await client.resign(rid, b2.leader_token or "")


@pytest.mark.parametrize("kind", STORES)
async def test_watch_room_sees_snapshot_leader_renewal_vacancy(procs: Processes, tmp_path: Path,
                                                               kind: str) -> None:
    client = await serve_on(procs, kind, tmp_path)
    rid = "my-own-room-id"  # a room nobody created: campaigning in it works as well
    frames: list[WatchFrame] = []
    async with client.watch_room(rid) as watcher:
        async def nxt() -> WatchFrame:
            f = await asyncio.wait_for(watcher.__anext__(), 10)
            frames.append(f)
            return f

        first = await nxt()
        assert (first.status, first.leader, first.election_id) == ("vacant", None, rid)
        a = await client.campaign(rid, "worker-a", ttl=10)
        leader = await nxt()
        assert leader.status == "leader" and leader.leader is not None
        assert (leader.leader.candidate_id, leader.leader.term) == ("worker-a", a.leader.term)
        assert a.leader_token is not None
        # A longer TTL: a renewal within the campaign's millisecond would not move the expiry.
        await client.renew(rid, a.leader_token, 20)
        renewed = await nxt()
        assert renewed.leader is not None and renewed.leader.expires_at > leader.leader.expires_at
        await client.resign(rid, a.leader_token)
        vacant = await nxt()
        assert (vacant.status, vacant.leader) == ("vacant", None)
    assert all(f.schema_version == 1 and f.observed_at.tzinfo is not None for f in frames)


async def test_the_token_travels_only_in_request_bodies(procs: Processes, tmp_path: Path) -> None:
    # Everything the client sends goes through a proxy that records it: the token must appear
    # in bodies only, never in a request line or header.
    srv = await procs.serve(f"file:{tmp_path}")
    vip = await Proxy([srv]).start()
    try:
        client = LeaseClient(vip.base)
        rid = (await client.create_room()).election_id
        won = await client.campaign(rid, "worker-a", ttl=10)
        assert won.leader_token is not None
        secret = won.leader_token.reveal().encode()
        await client.renew(rid, won.leader_token, 10)
        await client.resign(rid, won.leader_token)
        requests = bytes(vip.sent).split(b"POST ")[1:]
        assert len(requests) == 4
        in_bodies = 0
        for req in requests:
            head, _, body = req.partition(b"\r\n\r\n")
            assert secret not in head, head
            in_bodies += secret in body
        assert in_bodies == 2, "renew and resign send it"
    finally:
        await vip.close()
