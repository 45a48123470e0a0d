// hold's answers to what a real server only does at a bad moment, against scripted servers:
// lost terms, renewals of another term, limits waited out, the deadline from a request's start.
import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, test } from "node:test";
import { createLeaseClient, LeaseApiError } from "../src/index.js";
import { scripted } from "./support/scripted.js";
import { pollUntil } from "./support/server.js";

const room = "room-abcdefgh";
const token = "tok-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdef";
const fast = { minBackoffMs: 20, maxBackoffMs: 100, jitter: () => 0 };

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function leader(candidate: string, term: number, withToken = true) {
  return {
    status: "leader",
    election_id: room,
    leader: { candidate_id: candidate, term, expires_at: new Date(Date.now() + 5000).toISOString() },
    ...(withToken ? { leader_token: token, renew_after_ms: 2500 } : {}),
  };
}

function apiError(res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}): void {
  json(res, status, { error: code, code, details: "", request_id: "req_0123456789abcdef0123456789abcdef" }, headers);
}

/** The path's last segment: campaign, renew, resign. */
function op(req: IncomingMessage): string {
  return req.url?.split("/").at(-1) ?? "";
}

describe("hold against scripted answers", () => {
  for (const status of [400, 404]) {
    test(`a renewal answered ${status} lease_not_current ends the term as lost; nothing to resign`, async () => {
      const ops: string[] = [];
      let renewals = 0;
      const srv = await scripted((req, res) => {
        ops.push(op(req));
        if (op(req) === "campaign") return json(res, 200, leader("me", 2));
        if (op(req) === "renew" && renewals++ === 0) return json(res, 200, leader("me", 2));
        apiError(res, status, "lease_not_current");
      });
      const lost: Error[] = [];
      const l = await createLeaseClient(srv.base, fast).hold(room, "me", {
        ttlSeconds: 5,
        renewIntervalMs: 50,
        onLost: (c) => lost.push(c),
      });
      const cause = await l.done;
      assert.equal(cause.reason, "lost");
      assert.ok(cause.cause instanceof LeaseApiError && cause.cause.status === status);
      assert.deepEqual(lost, [cause]);
      assert.ok(!cause.message.includes(token), "the cause shows the token");
      assert.equal(await l.resign(), 0);
      assert.ok(!ops.includes("resign"), `requests: ${ops}`);
    });
  }

  for (const [name, answer] of [
    ["another term", leader("me", 3)],
    ["follower", { ...leader("other", 3, false), status: "follower", retry_after_ms: 4000 }],
  ] as const) {
    test(`a renewal answered with ${name} ends the term as lost`, async () => {
      const srv = await scripted((req, res) => json(res, 200, op(req) === "campaign" ? leader("me", 2) : answer));
      const l = await createLeaseClient(srv.base, fast).hold(room, "me", { ttlSeconds: 5, renewIntervalMs: 50 });
      assert.equal((await l.done).reason, "lost");
    });
  }

  test("waits out a 429's Retry-After and backs off from failures, then leads", async () => {
    const srv = await scripted((req, res, n) => {
      if (n === 0) return apiError(res, 429, "rate_limited", { "Retry-After": "1" });
      if (n === 1) return apiError(res, 503, "unavailable");
      if (op(req) === "campaign") return json(res, 200, leader("me", 7));
      json(res, 200, { status: "vacant", election_id: room, previous_term: 7 });
    });
    const l = await createLeaseClient(srv.base, fast).hold(room, "me", { ttlSeconds: 5 });
    assert.equal(l.fence, 7);
    const [first = 0, second = 0, third = 0] = srv.arrivals;
    assert.ok(second - first >= 990, `the campaign after a Retry-After of 1 s came ${second - first} ms later`);
    assert.ok(third - second < 900, `the retry after a 503 waited ${third - second} ms (max back-off 100 ms)`);
    assert.equal(await l.resign(), 7);
  });

  test("an answer retrying cannot change rejects hold at once", async () => {
    const srv = await scripted((_req, res) => apiError(res, 422, "invalid_ttl"));
    await assert.rejects(
      createLeaseClient(srv.base, fast).hold(room, "me", { ttlSeconds: 5 }),
      (e: unknown) => e instanceof LeaseApiError && e.code === "invalid_ttl",
    );
  });

  test("the deadline runs from the start of the last confirmed request, not its answer", async () => {
    // The first renewal is answered 2 s late; every later one fails. The term must end
    // TTL − margin − stopBefore after that slow renewal *arrived*, not after its answer.
    const ttl = 5000;
    const margin = 500;
    const stopBefore = 300;
    let slowArrival = 0;
    let renewals = 0;
    const srv = await scripted((req, res) => {
      if (op(req) === "campaign") return json(res, 200, leader("me", 2));
      if (renewals++ === 0) {
        slowArrival = performance.now();
        setTimeout(() => json(res, 200, leader("me", 2)), 2000);
        return;
      }
      apiError(res, 503, "unavailable");
    });
    const l = await createLeaseClient(srv.base, fast).hold(room, "me", {
      ttlSeconds: 5,
      renewIntervalMs: 1000, // so that a deadline left at the campaign's start would end 1 s early
      stopBeforeMs: stopBefore,
    });
    const cause = await l.done;
    const endedAt = performance.now();
    assert.equal(cause.reason, "deadline");
    const expected = slowArrival + ttl - margin - stopBefore;
    assert.ok(endedAt <= expected + 50, `ended ${endedAt - expected} ms after start + TTL − margin − stop`);
    assert.ok(endedAt >= expected - 250, `ended ${expected - endedAt} ms early: the deadline did not move`);
  });

  test("its signal stops a follower promptly, and ends a won term as aborted", async () => {
    const srv = await scripted((req, res) => {
      if (op(req) === "watch") {
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        res.flushHeaders();
        return; // a room watch that shows nothing
      }
      if (op(req) === "campaign") {
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () => {
          if (body.includes('"follower-me"')) {
            json(res, 200, { ...leader("other", 4, false), status: "follower", retry_after_ms: 60_000 });
          } else json(res, 200, leader("me", 5));
        });
        return;
      }
      json(res, 200, leader("me", 5));
    });
    const client = createLeaseClient(srv.base, fast);
    const ac = new AbortController();
    const following = client.hold(room, "follower-me", { ttlSeconds: 5, signal: ac.signal });
    await pollUntil(5000, "the follower's campaign and watch", () => srv.arrivals.length >= 2);
    const began = performance.now();
    ac.abort(new Error("shutting down"));
    await assert.rejects(following, /shutting down/);
    assert.ok(performance.now() - began < 500, "hold did not stop promptly");

    const ac2 = new AbortController();
    const l = await client.hold(room, "me", { ttlSeconds: 5, signal: ac2.signal });
    ac2.abort(new Error("bye"));
    const cause = await l.done;
    assert.equal(cause.reason, "aborted");
    assert.equal(l.signal.aborted, true);
  });
});
