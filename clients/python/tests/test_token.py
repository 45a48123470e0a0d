"""The leader token never shows: not in str, repr, format, a result's repr, an error, a log
line or a Leadership."""

from __future__ import annotations

import asyncio
import logging
import pickle

import pytest

from lfp_swarm_lease import LeaderToken, LeadershipEndedError, LeaseApiError, LeaseClient, Options
from support import Processes

SECRET = "c2VjcmV0LXRva2VuLXZhbHVlLW9mLTQzLWNoYXJhY3Rlcg"


def test_every_rendering_is_redacted() -> None:
    token = LeaderToken(SECRET)
    shown = [str(token), repr(token), f"{token}", f"{token!r}", f"{token:>60}", "%s" % token,
             format(token, ""), repr([token]), repr({"t": token})]
    for s in shown:
        assert SECRET not in s and "[redacted]" in s, s
    assert token.reveal() == SECRET


def test_equality_without_revealing() -> None:
    assert LeaderToken(SECRET) == LeaderToken(SECRET)
    assert LeaderToken(SECRET) != LeaderToken(SECRET + "x")
    assert LeaderToken(SECRET) != SECRET, "a token is not equal to a string"
    assert len({LeaderToken(SECRET), LeaderToken(SECRET)}) == 1
    assert pickle.loads(pickle.dumps(LeaderToken(SECRET))) == LeaderToken(SECRET)
    with pytest.raises(TypeError):
        LeaderToken("")


async def test_results_errors_logs_and_terms_never_show_it(
        procs: Processes, store: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    client = LeaseClient((await procs.serve(store)).base,
                         Options(min_backoff=0.05, max_backoff=0.2))
    rid = (await client.create_room()).election_id
    won = await client.campaign(rid, "worker-a", ttl=10)
    assert won.leader_token is not None
    secret = won.leader_token.reveal()
    shown = [repr(won), str(won)]
    held_secret = ""
    with pytest.raises(LeadershipEndedError) as ended:
        async with client.hold("other-room-id", "worker-b", ttl=5, renew_interval=0.2) as held:
            shown += [repr(held), str(held), repr(vars(held))]
            held_secret = held._token.reveal()
            await client.resign("other-room-id", held_secret)  # the term is lost: logged
            await asyncio.sleep(20)  # cancelled long before; the test fails if not
    shown += [str(ended.value), repr(ended.value), str(ended.value.__cause__)]
    await client.resign(rid, won.leader_token)
    try:
        await client.renew(rid, won.leader_token, 10)
    except LeaseApiError as e:
        shown += [str(e), repr(e), e.details, e.error]
    shown.append(caplog.text)
    assert "leadership ended (lost)" in caplog.text
    for s in shown:
        assert secret not in s and held_secret not in s, s
