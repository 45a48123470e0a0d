// hold against a real `serve`: handover on resign, and the leader's work stopped before the
// safety deadline when the server dies.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inspect } from "node:util";
import { createLeaseClient, type Leadership, LeadershipEndedError } from "../src/index.js";
import { pollUntil, startServe, tempStore } from "./support/server.js";

const fast = { minBackoffMs: 50, maxBackoffMs: 200 };

describe("hold", () => {
  test("a follower takes over at once when the leader resigns", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base, fast);
    const { election_id } = await client.createRoom();
    let leaderSignal: AbortSignal | undefined;
    const lost: LeadershipEndedError[] = [];
    const a = await client.hold(election_id, "worker-a", {
      ttlSeconds: 30,
      onLeader: (l) => {
        leaderSignal = l.signal;
      },
      onLost: (cause) => lost.push(cause),
    });
    assert.ok(leaderSignal && !leaderSignal.aborted, "onLeader got the term's live signal");
    let bWon: Leadership | undefined;
    const b = client.hold(election_id, "worker-b", { ttlSeconds: 30 }).then((l) => {
      bWon = l;
      return l;
    });
    // b follows: the room's lease has 30 s left, so only the room's watch can wake it sooner.
    await pollUntil(
      5000,
      "b follows",
      async () => (await client.status(election_id)).leader?.candidate_id === "worker-a",
    );
    assert.equal(bWon, undefined);
    const resignedAt = performance.now();
    assert.equal(await a.resign(), a.fence);
    assert.equal(leaderSignal?.aborted, true);
    assert.equal(a.cause?.reason, "resigned");
    assert.deepEqual(lost, [], "onLost is not called for a resignation");
    const leaderB = await b;
    const took = performance.now() - resignedAt;
    assert.ok(took < 2000, `the handover took ${took} ms`);
    assert.ok(leaderB.fence > a.fence);
    assert.equal((await client.status(election_id)).leader?.candidate_id, "worker-b");
    await leaderB.resign();
    await srv.stop();
  });

  test("renews from the start of the last confirmed request and keeps the term", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base, { ...fast, jitter: () => 0 });
    const { election_id } = await client.createRoom();
    const l = await client.hold(election_id, "worker-a", { ttlSeconds: 5, renewIntervalMs: 300 });
    const first = l.deadline;
    await pollUntil(3000, "a renewal moved the deadline", () => l.deadline > first + 250);
    assert.equal(l.signal.aborted, false);
    assert.equal((await client.status(election_id)).leader?.term, l.fence);
    const shown = [String(l), JSON.stringify(l), inspect(l, { showHidden: true, depth: 10 })].join("\n");
    assert.ok(!/tok|leader_token/.test(shown.replace(/"leader"/g, "")), shown);
    await l.resign();
    await srv.stop();
  });

  test("stops the leader's work before its deadline when the server is SIGKILLed", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base, fast);
    const { election_id } = await client.createRoom();
    let abortedAt = 0;
    const lost: LeadershipEndedError[] = [];
    const l = await client.hold(election_id, "worker-a", {
      ttlSeconds: 5,
      stopBeforeMs: 500,
      onLeader: (leadership) => {
        leadership.signal.addEventListener("abort", () => {
          abortedAt = performance.now();
        });
      },
      onLost: (cause) => lost.push(cause),
    });
    const killedAt = performance.now();
    await srv.stop("SIGKILL");
    const cause = await l.done;
    assert.ok(cause instanceof LeadershipEndedError);
    assert.equal(cause.reason, "deadline");
    assert.deepEqual(lost, [cause]);
    assert.ok(abortedAt > 0, "the leader's signal aborted");
    // The deadline is the start of the last confirmed request + 5 s − 0.5 s: the work must stop
    // 0.5 s (stopBeforeMs) before it, and never later than the TTL after the kill.
    assert.ok(abortedAt <= l.deadline - 500 + 50, `stopped ${abortedAt - (l.deadline - 500)} ms after deadline − stop`);
    assert.ok(abortedAt - killedAt < 5000, `stopped ${abortedAt - killedAt} ms after the kill`);
  });

  test("refuses a TTL and interval that cannot be safe", async () => {
    const client = createLeaseClient("http://127.0.0.1:1");
    await assert.rejects(client.hold("room-abcdefgh", "a", { ttlSeconds: 2 }), /ttlSeconds 2/);
    await assert.rejects(
      client.hold("room-abcdefgh", "a", { ttlSeconds: 5, renewIntervalMs: 4000, stopBeforeMs: 600 }),
      /below the TTL minus/,
    );
  });
});
