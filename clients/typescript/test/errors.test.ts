// The server's error answers as typed LeaseApiErrors, against real `serve` processes.
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createLeaseClient, LeaseApiError } from "../src/index.js";
import { cli, namespace, startServe, tempStore } from "./support/server.js";

const requestIdPattern = /^req_[0-9a-f]{32}$/;

/** Resolves the LeaseApiError that promise rejects with. */
async function apiError(promise: Promise<unknown>): Promise<LeaseApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof LeaseApiError, `not a LeaseApiError: ${String(error)}`);
    return error;
  }
  assert.fail("no error");
}

describe("errors", () => {
  test("429 rate_limited with Retry-After", async () => {
    const srv = await startServe(tempStore(), { args: ["--admission-per-minute", "1"] });
    const client = createLeaseClient(srv.base);
    await client.createRoom();
    const error = await apiError(client.createRoom());
    assert.equal(error.status, 429);
    assert.equal(error.code, "rate_limited");
    assert.match(error.requestId, requestIdPattern);
    assert.ok(error.retryAfterMs >= 1000, `retryAfterMs ${error.retryAfterMs}`);
    assert.equal(error.temporary, true);
    assert.match(error.message, /HTTP 429 rate_limited/);
    await srv.stop();
  });

  test("404 lease_not_current for a token of a vacant room", async () => {
    const srv = await startServe(tempStore());
    const client = createLeaseClient(srv.base);
    const { election_id } = await client.createRoom();
    const won = await client.campaign(election_id, { candidateId: "worker-a", ttlSeconds: 10 });
    const token = won.leader_token;
    assert.ok(token);
    await client.resign(election_id, token);
    const error = await apiError(client.renew(election_id, token, 10));
    assert.equal(error.status, 404);
    assert.equal(error.code, "lease_not_current");
    assert.equal(error.leaseNotCurrent, true);
    assert.equal(error.temporary, false);
    assert.match(error.requestId, requestIdPattern);
    assert.ok(!error.message.includes(token.reveal()), "the error shows the token");
    await srv.stop();
  });

  test("503 not_ready from a store that cannot be read", async () => {
    const dir = tempStore();
    const ns = namespace();
    await cli(dir, ns, "a", "init");
    const file = readdirSync(dir).find((f) => f.endsWith(".lease.json"));
    assert.ok(file, "the election's file");
    writeFileSync(join(dir, file), "{broken");
    const srv = await startServe(dir, { ns });
    const client = createLeaseClient(srv.base);
    assert.deepEqual(await client.healthz(), { status: "ok" });
    const error = await apiError(client.readyz());
    assert.equal(error.status, 503);
    assert.equal(error.code, "not_ready");
    assert.match(error.requestId, requestIdPattern);
    assert.equal(error.temporary, true);
    await srv.stop();
  });

  test("controller endpoints are typed and answer", async () => {
    const dir = tempStore();
    const ns = namespace();
    const srv = await startServe(dir, { ns });
    const client = createLeaseClient(srv.base);
    assert.equal((await client.readyz()).status, "ready");
    assert.equal((await client.info()).namespace, ns);
    const state = await client.state();
    assert.equal(state.namespace, ns);
    assert.equal(state.acquired, false);
    await srv.stop();
  });

  test("an unreachable server is an Error naming the operation; a bad base URL is refused", async () => {
    const client = createLeaseClient("http://127.0.0.1:1", { requestTimeoutMs: 2000 });
    await assert.rejects(client.healthz(), /lfp-swarm-lease: healthz: /);
    assert.throws(() => createLeaseClient("ftp://x"), /invalid base URL/);
    assert.throws(() => createLeaseClient("http://x", { initialTimeoutMs: -1 }), /initialTimeoutMs/);
  });
});
