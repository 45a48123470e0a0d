// The elections API of createLeaseClient against a real `serve` on a file store.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inspect } from "node:util";
import { createLeaseClient, type LeaderToken, type RoomState } from "../src/index.js";
import { startServe, tempStore } from "./support/server.js";

describe("elections", () => {
  test("round trip: create, leader and follower, renew, resign, a higher term", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base);
    const room = await client.createRoom();
    assert.match(room.election_id, /^[A-Za-z0-9_-]{32}$/);

    const a = await client.campaign(room.election_id, { candidateId: "worker-a", ttlSeconds: 10, metadata: "a" });
    assert.equal(a.status, "leader");
    assert.equal(a.leader.candidate_id, "worker-a");
    assert.ok(a.leader_token, "a leader gets a token");
    assert.ok((a.renew_after_ms ?? 0) > 0);

    const b = await client.campaign(room.election_id, { candidateId: "worker-b", ttlSeconds: 10 });
    assert.equal(b.status, "follower");
    assert.equal(b.leader_token, undefined);
    assert.equal(b.leader.candidate_id, "worker-a");
    assert.equal(b.leader.term, a.leader.term);
    assert.ok((b.retry_after_ms ?? 0) > 0);

    const status = await client.status(room.election_id);
    assert.equal(status.status, "leader");
    assert.equal(status.leader?.candidate_id, "worker-a");
    assert.equal(status.leader?.metadata, "a");

    const renewed = await client.renew(room.election_id, a.leader_token as LeaderToken, 10);
    assert.equal(renewed.status, "leader");
    assert.equal(renewed.leader.term, a.leader.term);

    const resigned = await client.resign(room.election_id, a.leader_token as LeaderToken);
    assert.equal(resigned.status, "vacant");
    assert.equal(resigned.previous_term, a.leader.term);
    assert.equal((await client.status(room.election_id)).status, "vacant");

    const b2 = await client.campaign(room.election_id, { candidateId: "worker-b", ttlSeconds: 10 });
    assert.equal(b2.status, "leader");
    assert.ok(b2.leader.term > a.leader.term, `term ${b2.leader.term} after ${a.leader.term}`);
    await srv.stop();
  });

  test("the leader token never shows in strings, JSON or inspect", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base);
    const { election_id } = await client.createRoom();
    const result = await client.campaign(election_id, { candidateId: "worker-a", ttlSeconds: 10 });
    const token = result.leader_token as LeaderToken;
    const secret = token.reveal();
    assert.ok(secret.length >= 32);
    for (const shown of [
      String(token),
      `${token}`,
      JSON.stringify(result),
      inspect(result, { depth: 10, showHidden: true }),
      inspect(token),
    ]) {
      assert.ok(!shown.includes(secret), `the token shows in ${shown}`);
      assert.match(shown, /redacted/);
    }
    await srv.stop();
  });

  test("watchRoom sees snapshot, leader, vacant", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base, { minBackoffMs: 50, maxBackoffMs: 200 });
    const { election_id } = await client.createRoom();
    const ac = new AbortController();
    const states: RoomState[] = [];
    const iterator = client.watchRoom(election_id, { signal: ac.signal });
    const next = async () => {
      const r = await iterator.next();
      assert.equal(r.done, false);
      states.push(r.value as RoomState);
      return r.value as RoomState;
    };
    assert.equal((await next()).status, "vacant");
    const a = await client.campaign(election_id, { candidateId: "worker-a", ttlSeconds: 10 });
    const leader = await next();
    assert.equal(leader.status, "leader");
    assert.equal(leader.leader?.candidate_id, "worker-a");
    assert.equal(leader.leader?.term, a.leader.term);
    await client.resign(election_id, a.leader_token as LeaderToken);
    const vacant = await next();
    assert.equal(vacant.status, "vacant");
    assert.equal(vacant.leader, null);
    ac.abort();
    assert.equal((await iterator.next()).done, true);
    await srv.stop();
  });

  test("watchRoom of an invalid room fails at once", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base);
    assert.throws(() => client.watchRoom("bad id!"), /election id/);
    await srv.stop();
  });
});
