// Edge cases of the event-stream watches, against scripted servers on loopback sockets.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLeaseClient, LeaseApiError, RemoteLeaseObserver, type State } from "../src/index.js";
import { eventStream, frame, scripted, stateOf, vacantFrame } from "./support/scripted.js";
import { pollUntil } from "./support/server.js";

const fast = { minBackoffMs: 20, maxBackoffMs: 100, jitter: () => 0 };

/** The first n states of a watch, then stops it. */
async function take(observer: RemoteLeaseObserver, n: number): Promise<State[]> {
  const states: State[] = [];
  for await (const s of observer.watch()) {
    states.push(s);
    if (states.length === n) break;
  }
  return states;
}

describe("stream watches", () => {
  test("renewals are no change; a replayed state after a reconnect yields nothing", async () => {
    const srv = await scripted((_req, res, n) => {
      eventStream(res);
      if (n === 0) {
        const renewed = { ...stateOf("a", 5), renewed_at: "2026-01-01T00:00:01Z" };
        res.end(frame("current", stateOf("a", 5)) + frame("change", renewed) + frame("change", stateOf("b", 6)));
      } else {
        // The next connection replays the last state, then changes.
        res.end(frame("current", stateOf("b", 6)) + frame("change", stateOf("", 6)));
      }
    });
    const states = await take(RemoteLeaseObserver.connect(srv.base, fast), 3);
    assert.deepEqual(
      states.map((s) => [s.holder_id, s.fence]),
      [
        ["a", 5],
        ["b", 6],
        ["", 6],
      ],
    );
    assert.equal(srv.arrivals.length, 2);
  });

  test("unknown event types are skipped; an invalid state ends the connection", async () => {
    const srv = await scripted((_req, res, n) => {
      eventStream(res);
      if (n === 0)
        res.write(`: hello\n\nevent: future\ndata: {"x":1}\n\n${frame("current", stateOf("a", 1))}data: {broken\n\n`);
      else res.end(frame("current", stateOf("b", 2)));
    });
    const states = await take(RemoteLeaseObserver.connect(srv.base, fast), 2);
    assert.deepEqual(
      states.map((s) => s.holder_id),
      ["a", "b"],
    );
    assert.equal(srv.arrivals.length, 2, "the invalid state made it reconnect");
  });

  test("a stream gone silent, or a request never answered, is dropped after the idle timeout", async () => {
    const srv = await scripted((_req, res, n) => {
      if (n === 0) return; // accepted, never answered
      eventStream(res);
      if (n === 1)
        res.write(frame("current", stateOf("a", 1))); // then silence
      else res.end(frame("current", stateOf("b", 2)));
    });
    const began = performance.now();
    const states = await take(RemoteLeaseObserver.connect(srv.base, { ...fast, idleTimeoutMs: 300 }), 2);
    assert.deepEqual(
      states.map((s) => s.holder_id),
      ["a", "b"],
    );
    assert.equal(srv.arrivals.length, 3);
    const took = performance.now() - began;
    assert.ok(took >= 550 && took < 3000, `two idle timeouts of 300 ms took ${took} ms`);
  });

  test("the observer retries every answer; Retry-After is capped by the maximum back-off", async () => {
    const srv = await scripted((_req, res, n) => {
      if (n === 0) {
        res.writeHead(503, { "Content-Type": "application/json", "Retry-After": "30" });
        res.end(JSON.stringify({ error: "busy", code: "too_many_clients", details: "", request_id: "req_1" }));
      } else if (n === 1) {
        res.writeHead(200, { "Content-Type": "text/html" });
        res.end("<html>a proxy</html>");
      } else if (n === 2) {
        res.writeHead(404, { "Content-Type": "text/plain" });
        res.end("no healthy upstream");
      } else {
        eventStream(res);
        res.end(frame("current", stateOf("a", 1)));
      }
    });
    const states = await take(RemoteLeaseObserver.connect(srv.base, fast), 1);
    assert.equal(states[0]?.holder_id, "a");
    assert.equal(srv.arrivals.length, 4);
    const wait = (srv.arrivals[1] ?? 0) - (srv.arrivals[0] ?? 0);
    assert.ok(wait < 1000, `waited ${wait} ms after a Retry-After of 30 s (max back-off 100 ms)`);
  });

  test("a room watch waits out Retry-After and stops at an answer retrying cannot change", async () => {
    const srv = await scripted((req, res, n) => {
      if (n === 0) {
        res.writeHead(429, { "Content-Type": "application/json", "Retry-After": "1" });
        res.end(JSON.stringify({ error: "slow down", code: "rate_limited", details: "", request_id: "req_2" }));
      } else if (req.url?.includes("forbidden")) {
        res.writeHead(403, { "Content-Type": "application/json", "X-Request-Id": "req_3" });
        res.end(
          JSON.stringify({ error: "elections are disabled", code: "forbidden", details: "", request_id: "req_3" }),
        );
      } else {
        eventStream(res);
        res.end(frame("state", vacantFrame("room-abcdefgh")));
      }
    });
    const client = createLeaseClient(srv.base, fast);
    for await (const s of client.watchRoom("room-abcdefgh")) {
      assert.equal(s.status, "vacant");
      break;
    }
    const wait = (srv.arrivals[1] ?? 0) - (srv.arrivals[0] ?? 0);
    assert.ok(wait >= 990, `reconnected ${wait} ms after a Retry-After of 1 s`);
    await assert.rejects(
      async () => {
        for await (const _ of client.watchRoom("forbidden-room")) assert.fail("a state");
      },
      (e: unknown) =>
        e instanceof LeaseApiError && e.status === 403 && e.code === "forbidden" && e.requestId === "req_3",
    );
  });

  test("a path prefix of the base URL is kept", async () => {
    const paths: string[] = [];
    const srv = await scripted((req, res) => {
      paths.push(req.url ?? "");
      eventStream(res);
      res.end(frame("current", stateOf("a", 1)));
    });
    await take(RemoteLeaseObserver.connect(`${srv.base}/leases/`, fast), 1);
    assert.deepEqual(paths, ["/leases/v1/events"]);
  });

  test("an abort before the first state ends the watch quietly", async () => {
    const srv = await scripted(() => {}); // never answers
    const ac = new AbortController();
    const states: State[] = [];
    const done = (async () => {
      for await (const s of RemoteLeaseObserver.connect(srv.base, fast).watch({ signal: ac.signal })) states.push(s);
    })();
    await pollUntil(5000, "the request arrived", () => srv.arrivals.length === 1);
    ac.abort();
    await done;
    assert.deepEqual(states, []);
  });
});

describe("LeaseApiError", () => {
  test("from the server's body and headers, or a proxy's text", async () => {
    const body = {
      error: "slow down",
      code: "rate_limited",
      details: "600 per minute",
      request_id: "req_a",
      retry_after_ms: 1500,
    };
    const e = await LeaseApiError.fromResponse(
      new Response(JSON.stringify(body), { status: 429, headers: { "Retry-After": "7" } }),
    );
    assert.equal(e.status, 429);
    assert.equal(e.code, "rate_limited");
    assert.equal(e.requestId, "req_a");
    assert.equal(e.retryAfterMs, 7000, "the longer of Retry-After and retry_after_ms");
    assert.equal(e.message, "HTTP 429 rate_limited: slow down (600 per minute) [request req_a]");
    const proxy = await LeaseApiError.fromResponse(
      new Response("Bad Gateway", { status: 502, headers: { "X-Request-Id": "req_b" } }),
    );
    assert.equal(proxy.code, "");
    assert.equal(proxy.message, "HTTP 502: Bad Gateway [request req_b]");
    assert.equal(proxy.temporary, true);
  });
});
