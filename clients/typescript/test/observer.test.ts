// RemoteLeaseObserver against real `serve` and `run` processes on a file store.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, test } from "node:test";
import { InitialTimeoutError, RemoteLeaseObserver, type State } from "../src/index.js";
import { changed } from "../src/observer.js";
import {
  cli,
  metric,
  namespace,
  pollUntil,
  startRun,
  startServe,
  tempStore,
  vipBase,
  vipFetch,
} from "./support/server.js";

const fast = { minBackoffMs: 50, maxBackoffMs: 200 };

/** Reads states from a watch into an array, in the background, until the signal aborts. */
function collect(observer: RemoteLeaseObserver, signal: AbortSignal) {
  const states: State[] = [];
  let failure: unknown;
  const done = (async () => {
    try {
      for await (const s of observer.watch({ signal })) states.push(s);
    } catch (error) {
      failure = error;
    }
  })();
  return { states, done, failure: () => failure };
}

/** Asserts that no state equals the one before it. */
function assertNoReplays(states: State[]): void {
  for (let i = 1; i < states.length; i++) {
    assert.ok(
      changed(states[i - 1] as State, states[i] as State),
      `state ${i} replays state ${i - 1}: ${JSON.stringify(states)}`,
    );
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

describe("RemoteLeaseObserver", () => {
  test("first state, then a change made by another process", async () => {
    const dir = tempStore();
    const ns = namespace();
    const srv = await startServe(dir, { ns });
    const ac = new AbortController();
    const w = collect(RemoteLeaseObserver.connect(srv.base, fast), ac.signal);
    await pollUntil(10_000, "first state", () => w.states.length >= 1);
    assert.equal(w.states[0]?.namespace, ns);
    assert.equal(w.states[0]?.acquired, false);
    const fence = await cli(dir, ns, "alice", "try-acquire");
    await pollUntil(10_000, "the acquisition", () => w.states.some((s) => s.holder_id === "alice"));
    assert.equal(String(w.states.at(-1)?.fence), fence);
    ac.abort();
    await w.done;
    assert.equal(w.failure(), undefined);
    await srv.stop();
  });

  test("survives a server restart without replaying the state", async () => {
    const dir = tempStore();
    const ns = namespace();
    await cli(dir, ns, "alice", "try-acquire");
    let srv = await startServe(dir, { ns });
    const ac = new AbortController();
    const w = collect(RemoteLeaseObserver.connect(srv.base, fast), ac.signal);
    await pollUntil(10_000, "first state", () => w.states.length === 1);
    await srv.stop("SIGKILL");
    srv = await startServe(dir, { ns, listen: srv.addr });
    // The restarted server's first event is the same state: it must not be yielded again. A
    // change after it must arrive.
    await pollUntil(
      10_000,
      "the reconnect",
      async () => ((await metric(srv.base, "lfp_swarm_lease_sse_clients")) ?? 0) >= 1,
    );
    const fence = (w.states[0] as State).fence;
    await cli(dir, ns, "alice", "release", String(fence));
    await pollUntil(10_000, "the release", () => w.states.length >= 2);
    assert.equal(w.states.length, 2, JSON.stringify(w.states));
    assert.equal(w.states[1]?.acquired, false);
    assertNoReplays(w.states);
    ac.abort();
    await w.done;
    await srv.stop();
  });

  test("switches between two servers of one election (a VIP) without duplicates", async () => {
    const dir = tempStore();
    const ns = namespace();
    await cli(dir, ns, "alice", "try-acquire");
    const one = await startServe(dir, { ns });
    const two = await startServe(dir, { ns });
    const served = new Map<string, number>();
    const vip = vipFetch([one, two], served);
    const ac = new AbortController();
    const w = collect(RemoteLeaseObserver.connect(vipBase, { ...fast, fetch: vip }), ac.signal);
    await pollUntil(10_000, "first state", () => w.states.length === 1);
    await one.stop("SIGKILL");
    await pollUntil(
      10_000,
      "a connection to the second server",
      async () => (await metric(two.base, "lfp_swarm_lease_sse_clients")) === 1,
    );
    await cli(dir, ns, "alice", "release", String(w.states[0]?.fence));
    await pollUntil(10_000, "the release", () => w.states.length >= 2);
    assert.equal(w.states.length, 2, JSON.stringify(w.states));
    assert.ok((served.get(two.base) ?? 0) >= 1);
    assertNoReplays(w.states);
    ac.abort();
    await w.done;
    await two.stop();
  });

  test("follows a handover between two run replicas", async () => {
    const dir = tempStore();
    const ns = namespace();
    const a = await startRun({ store: `file://${dir}`, ns, holder: "replica-a" });
    await pollUntil(
      10_000,
      "replica-a leads",
      async () => (await (await fetch(`${a.base}/v1/state`)).json()).holder_id === "replica-a",
    );
    const b = await startRun({ store: `file://${dir}`, ns, holder: "replica-b" });
    const vip = vipFetch([a, b]);
    const ac = new AbortController();
    const w = collect(RemoteLeaseObserver.connect(vipBase, { ...fast, fetch: vip }), ac.signal);
    await pollUntil(10_000, "first state", () => w.states.length >= 1);
    assert.equal(w.states[0]?.holder_id, "replica-a");
    await a.stop("SIGTERM"); // releases: replica-b takes over within milliseconds
    await pollUntil(
      15_000,
      "replica-b leads",
      () => w.states.at(-1)?.holder_id === "replica-b" && w.states.at(-1)?.acquired === true,
    );
    assert.ok((w.states.at(-1)?.fence ?? 0) > (w.states[0]?.fence ?? 0));
    assertNoReplays(w.states);
    ac.abort();
    await w.done;
    await b.stop();
  });

  test("gives up after the initial wait when nothing answers", async () => {
    const port = await closedPort();
    const observer = RemoteLeaseObserver.connect(`http://127.0.0.1:${port}`, { ...fast, initialTimeoutMs: 1000 });
    const began = performance.now();
    await assert.rejects(
      async () => {
        for await (const _ of observer.watch()) assert.fail("a state from nowhere");
      },
      (error: unknown) => {
        assert.ok(error instanceof InitialTimeoutError, String(error));
        assert.equal(error.timeoutMs, 1000);
        assert.ok(error.cause instanceof Error, "the last connection failure is the cause");
        return true;
      },
    );
    const took = performance.now() - began;
    assert.ok(took >= 950 && took < 3000, `gave up after ${took} ms`);
  });

  test("waits 60 s for the first state by default", { timeout: 90_000 }, async () => {
    const port = await closedPort();
    const observer = RemoteLeaseObserver.connect(`http://127.0.0.1:${port}`, { maxBackoffMs: 2000 });
    const began = performance.now();
    let error: unknown;
    try {
      for await (const _ of observer.watch()) assert.fail("a state from nowhere");
    } catch (e) {
      error = e;
    }
    const took = performance.now() - began;
    assert.ok(error instanceof InitialTimeoutError, String(error));
    assert.equal(error.timeoutMs, 60_000);
    assert.ok(took >= 59_900 && took < 63_000, `gave up after ${took} ms`);
  });

  test("abort ends the iteration promptly and closes the stream", async () => {
    const dir = tempStore();
    const srv = await startServe(dir, { ns: namespace() });
    const ac = new AbortController();
    const w = collect(RemoteLeaseObserver.connect(srv.base, fast), ac.signal);
    await pollUntil(10_000, "first state", () => w.states.length === 1);
    assert.equal(await metric(srv.base, "lfp_swarm_lease_sse_clients"), 1);
    const began = performance.now();
    ac.abort();
    await w.done;
    const took = performance.now() - began;
    assert.ok(took < 200, `the iteration ended ${took} ms after the abort`);
    assert.equal(w.failure(), undefined);
    await pollUntil(
      5000,
      "the server sees the stream closed",
      async () => (await metric(srv.base, "lfp_swarm_lease_sse_clients")) === 0,
    );
    await srv.stop();
  });

  test("waitForHolder skips states without a holder", async () => {
    const dir = tempStore();
    const ns = namespace();
    const srv = await startServe(dir, { ns });
    const observer = RemoteLeaseObserver.connect(srv.base, fast);
    const waiting = observer.waitForHolder(10_000);
    await pollUntil(
      10_000,
      "the observer connected",
      async () => (await metric(srv.base, "lfp_swarm_lease_sse_clients")) === 1,
    );
    await cli(dir, ns, "bob", "try-acquire");
    const state = await waiting;
    assert.equal(state.holder_id, "bob");
    assert.equal(state.acquired, true);
    await srv.stop();
  });
});
