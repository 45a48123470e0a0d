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

/** A logger that keeps the errors of the watches' reconnects (warn for the observer, debug for rooms). */
function errorLog() {
  const errors: string[] = [];
  const keep = (_message: string, fields?: Record<string, unknown>) => {
    if (fields && "error" in fields) errors.push(String(fields.error));
  };
  return {
    logger: { warn: keep, debug: keep },
    /** Asserts that an error logged so far says want, and that none repeats a long event. */
    expect(want: string) {
      for (const e of errors)
        assert.ok(e.length <= 1000, `a logged error of ${e.length} characters: ${e.slice(0, 200)}…`);
      assert.ok(
        errors.some((e) => e.includes(want)),
        `no logged error says ${JSON.stringify(want)}; logged:\n${errors.join("\n")}`,
      );
    },
  };
}

/** base's JSON with set's fields replaced and drop's removed. */
function spoiled(base: Record<string, unknown>, set: Record<string, unknown> = {}, ...drop: string[]): string {
  const m: Record<string, unknown> = { ...base, ...set };
  for (const k of drop) delete m[k];
  return JSON.stringify(m);
}

const validState = () => ({
  ...stateOf("a", 7),
  acquired_at: "2030-01-02T03:04:05Z",
  renewed_at: "2030-01-02T03:04:06.5Z",
});

const room = "room-abcdefgh";

/** A watch frame of room with a leader. */
const validFrame = () => ({
  schema_version: 1,
  election_id: room,
  status: "leader",
  retry_after_ms: 5000,
  observed_at: "2030-01-02T03:04:00Z",
  leader: { candidate_id: "a", term: 3, expires_at: "2030-01-02T03:04:05.000Z", metadata: "m" },
});

/** A frame of room led by candidate in term. */
function ledFrame(candidate: string, term: number) {
  return { ...validFrame(), leader: { candidate_id: candidate, term, expires_at: "2030-01-02T03:04:05.000Z" } };
}

// The same cases as the Go client's tests (protocol_test.go), with the same words.
const offContractStates: [name: string, data: string, want: string][] = [
  ["null", "null", "want a JSON object, got null"],
  ["number", "42", "want a JSON object, got a number"],
  ["string", '"state"', "want a JSON object, got a string"],
  ["array", "[]", "want a JSON object, got an array"],
  ["boolean", "true", "want a JSON object, got a boolean"],
  ["not JSON", "{not json", "not JSON"],
  ["empty object", "{}", 'field "namespace": missing'],
  ["fence missing", spoiled(validState(), {}, "fence"), 'field "fence": missing'],
  ["expires_at missing", spoiled(validState(), {}, "expires_at"), 'field "expires_at": missing'],
  ["exists null", spoiled(validState(), { exists: null }), 'field "exists": want a boolean, got null'],
  ["holder_id a number", spoiled(validState(), { holder_id: 1 }), 'field "holder_id": want a string, got a number'],
  ["fence a string", spoiled(validState(), { fence: "7" }), 'field "fence": want a non-negative integer, got a string'],
  ["fence negative", spoiled(validState(), { fence: -1 }), 'field "fence": want a non-negative integer, got a number'],
  [
    "fence a fraction",
    spoiled(validState(), { fence: 1.5 }),
    'field "fence": want a non-negative integer, got a number',
  ],
  ["ttl_ms a boolean", spoiled(validState(), { ttl_ms: false }), 'field "ttl_ms": want an integer, got a boolean'],
  [
    "acquired_at not a time",
    spoiled(validState(), { acquired_at: "yesterday" }),
    'field "acquired_at": want an RFC 3339 time or null, got a string',
  ],
  [
    "renewed_at a number",
    spoiled(validState(), { renewed_at: 0 }),
    'field "renewed_at": want an RFC 3339 time or null, got a number',
  ],
];

const leaderOf = (set: Record<string, unknown>, ...drop: string[]) => ({
  leader: JSON.parse(spoiled(validFrame().leader, set, ...drop)),
});

const offContractFrames: [name: string, data: string, want: string][] = [
  ["null", "null", "want a JSON object, got null"],
  ["number", "42", "want a JSON object, got a number"],
  ["empty object", "{}", 'field "schema_version": missing'],
  ["schema_version 2", spoiled(validFrame(), { schema_version: 2 }), 'field "schema_version": want 1'],
  ["another room", spoiled(validFrame(), { election_id: "room-another1" }), `field "election_id": want "${room}"`],
  ["status follower", spoiled(validFrame(), { status: "follower" }), 'field "status": want "leader" or "vacant"'],
  ["status null", spoiled(validFrame(), { status: null }), 'field "status": want a string, got null'],
  ["leader missing", spoiled(validFrame(), {}, "leader"), 'field "leader": missing'],
  ["leader null", spoiled(validFrame(), { leader: null }), 'status "leader" without a leader'],
  ["vacant with a leader", spoiled(validFrame(), { status: "vacant" }), 'status "vacant" with a leader'],
  ["leader a string", spoiled(validFrame(), { leader: "a" }), 'field "leader": want an object or null, got a string'],
  ["leader.term missing", spoiled(validFrame(), leaderOf({}, "term")), 'field "leader.term": missing'],
  [
    "leader.candidate_id a number",
    spoiled(validFrame(), leaderOf({ candidate_id: 5 })),
    'field "leader.candidate_id": want a string, got a number',
  ],
  [
    "leader.metadata null",
    spoiled(validFrame(), leaderOf({ metadata: null })),
    'field "leader.metadata": want a string, got null',
  ],
  [
    "leader.expires_at null",
    spoiled(validFrame(), leaderOf({ expires_at: null })),
    'field "leader.expires_at": want an RFC 3339 time, got null',
  ],
  [
    "retry_after_ms a string",
    spoiled(validFrame(), { retry_after_ms: "5" }),
    'field "retry_after_ms": want an integer, got a string',
  ],
  ["observed_at missing", spoiled(validFrame(), {}, "observed_at"), 'field "observed_at": missing'],
];

describe("events off the contract are never yielded: the watch reconnects and names the event", () => {
  for (const [name, data, want] of offContractStates) {
    test(`observer: ${name}`, async () => {
      const srv = await scripted((_req, res, n) => {
        eventStream(res);
        if (n === 0) res.write(`id: 7\nevent: current\ndata: ${data}\n\n`);
        else res.write(frame("current", stateOf("b", 9)));
      });
      const log = errorLog();
      const states = await take(RemoteLeaseObserver.connect(srv.base, { ...fast, logger: log.logger }), 1);
      assert.deepEqual(
        states.map((s) => [s.holder_id, s.fence]),
        [["b", 9]],
      );
      log.expect(`event "current" (id "7"): invalid state: ${want}`);
    });
  }

  for (const [name, data, want] of offContractFrames) {
    test(`room watch: ${name}`, async () => {
      const srv = await scripted((_req, res, n) => {
        eventStream(res);
        if (n === 0) res.write(`${frame("state", ledFrame("a", 1))}event: state\ndata: ${data}\n\n`);
        else res.write(frame("state", ledFrame("b", 2)));
      });
      const log = errorLog();
      const got: string[] = [];
      for await (const s of createLeaseClient(srv.base, { ...fast, logger: log.logger }).watchRoom(room)) {
        got.push(`${s.status} ${s.leader ? `${s.leader.candidate_id}/${s.leader.term}` : "vacant"}`);
        if (got.length === 2) break;
      }
      assert.deepEqual(got, ["leader a/1", "leader b/2"]);
      log.expect(`event "state": invalid state: ${want}`);
    });
  }
});

test("an event larger than 1 MiB ends the stream; the server could write little more of it", async () => {
  // The first stream's event never ends; it is offered 64 MiB, written as fast as the client
  // reads. The loopback sockets' buffers hold a few MiB more than the client read.
  const offered = 64 << 20;
  let written: Promise<number> | undefined;
  const srv = await scripted((_req, res, n) => {
    eventStream(res);
    if (n > 0) {
      res.write(frame("current", stateOf("b", 9)));
      return;
    }
    written = new Promise((resolve) => {
      let bytes = 0;
      const chunk = `data: ${"x".repeat(1018)}\n`.repeat(64);
      const pump = () => {
        while (bytes < offered) {
          bytes += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.once("close", () => resolve(bytes));
      res.write("event: change\n");
      pump();
    });
  });
  const log = errorLog();
  const states = await take(RemoteLeaseObserver.connect(srv.base, { ...fast, logger: log.logger }), 1);
  assert.equal(states[0]?.holder_id, "b");
  const bytes = await written;
  assert.ok(bytes !== undefined && bytes < 16 << 20, `the server wrote ${bytes} bytes of one event`);
  log.expect(`an event larger than ${1 << 20} characters`);
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
