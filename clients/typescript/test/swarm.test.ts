// The observer against two `run` replicas on the real Swarm store (the test Swarm named by
// SWARM_LEASE_TEST_DOCKER_HOST). Without it the test is skipped — and fails under CI=true.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { RemoteLeaseObserver, type State } from "../src/index.js";
import { changed } from "../src/observer.js";
import { cliOn, namespace, pollUntil, startRun, vipBase, vipFetch } from "./support/server.js";

const host = process.env.SWARM_LEASE_TEST_DOCKER_HOST ?? "";
const missing =
  "SWARM_LEASE_TEST_DOCKER_HOST is not set: skipping a test that needs the test Swarm (scripts/test-swarm.sh start; see README)";

test("observer follows a handover between two run replicas on the Swarm store", {
  skip: host === "" && process.env.CI !== "true" ? missing : false,
}, async () => {
  assert.ok(host, `${missing} — and CI=true, where the Swarm tests must run`);
  const env = { DOCKER_HOST: host };
  const ns = namespace("ts-swarm");
  after(() => cliOn("swarm", env, ns, "cleanup", "destroy").catch(() => {}));
  const a = await startRun({ store: "swarm", ns, holder: "replica-a", ttlMs: 5000, env });
  await pollUntil(
    30_000,
    "replica-a leads",
    async () => (await (await fetch(`${a.base}/v1/state`)).json()).holder_id === "replica-a",
  );
  const b = await startRun({ store: "swarm", ns, holder: "replica-b", ttlMs: 5000, env });
  const vip = vipFetch([a, b]);
  const states: State[] = [];
  const ac = new AbortController();
  const done = (async () => {
    for await (const s of RemoteLeaseObserver.connect(vipBase, {
      minBackoffMs: 50,
      maxBackoffMs: 500,
      fetch: vip,
    }).watch({ signal: ac.signal })) {
      states.push(s);
    }
  })();
  await pollUntil(30_000, "first state", () => states.length >= 1);
  assert.equal(states[0]?.holder_id, "replica-a");
  await a.stop("SIGTERM"); // releases; replica-b takes over
  await pollUntil(
    30_000,
    "replica-b leads",
    () => states.at(-1)?.holder_id === "replica-b" && states.at(-1)?.acquired === true,
  );
  assert.ok((states.at(-1)?.fence ?? 0) > (states[0]?.fence ?? 0));
  for (let i = 1; i < states.length; i++)
    assert.ok(changed(states[i - 1] as State, states[i] as State), JSON.stringify(states));
  ac.abort();
  await done;
  await b.stop("SIGTERM");
});
