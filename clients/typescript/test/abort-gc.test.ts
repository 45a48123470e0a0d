// Aborts must end streams and requests even after the garbage collector ran: Node 20's fetch
// follows a Request's signal through a weak reference only, so an abort that relies on it is
// lost once the Request object is collected (a hold follower then never stopped its room watch,
// and hold never returned). Run with --expose-gc (scripts/node-test.mjs passes it).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLeaseClient } from "../src/index.js";
import { eventStream, frame, scripted, vacantFrame } from "./support/scripted.js";
import { pollUntil } from "./support/server.js";

const gc = (globalThis as { gc?: () => void }).gc;

/** Rejects after ms, naming what did not finish. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Collects garbage until the heap settles, as a long-lived process eventually does. */
async function collectGarbage(): Promise<void> {
  assert.ok(gc, "run with --expose-gc: without it this test proves nothing");
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}

describe("aborts after garbage collection", () => {
  test("aborting a room watch ends it and closes the stream", async () => {
    let open = 0;
    const srv = await scripted((req, res) => {
      open++;
      req.socket.once("close", () => open--);
      eventStream(res);
      res.write(frame("state", vacantFrame("room-abcdefgh")));
    });
    const client = createLeaseClient(srv.base);
    const ac = new AbortController();
    const iterator = client.watchRoom("room-abcdefgh", { signal: ac.signal });
    assert.equal((await iterator.next()).value?.status, "vacant");
    const pending = iterator.next(); // waits for the next frame
    await collectGarbage();
    ac.abort();
    assert.equal((await within(2000, "the aborted watch", pending)).done, true);
    await pollUntil(2000, "the stream's connection closed", () => open === 0);
  });

  test("the request timeout ends a request the server never answers", async () => {
    const srv = await scripted(() => {}); // accepts, never answers
    const client = createLeaseClient(srv.base, { requestTimeoutMs: 500 });
    const began = performance.now();
    const call = client.status("room-abcdefgh");
    await pollUntil(2000, "the request arrived", () => srv.arrivals.length === 1);
    await collectGarbage();
    await assert.rejects(within(3000, "the timed-out request", call), /request timeout \(500 ms\)/);
    assert.ok(performance.now() - began < 2000);
  });
});
