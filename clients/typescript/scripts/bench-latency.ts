// The observer's change-to-state latency against a local server, for BENCHMARKS.md.
//
//   LFP_SWARM_LEASE_BIN=/path/to/lfp-swarm-lease node --import tsx scripts/bench-latency.ts [changes]
//
// A `serve` process observes one election on a temporary file store; a second process
// (the one-shot `try-acquire`, then `release`) changes it, alternately, `changes` times
// (default 200). The latency of a change is the wall-clock time from the lease file's
// modification (its mtime: the store's write) to the state's arrival in watch()'s iterator.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RemoteLeaseObserver, type State } from "../src/index.js";
import { cli, running, startProcess } from "../test/support/processes.js";

const changes = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "lfp-swarm-lease-bench-"));
const ns = "bench";
try {
  await cli(dir, ns, "bench", "init");
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".lease.json")) ?? "");
  const srv = await startProcess(["serve", "--store", `file://${dir}`, "--namespace", ns]);
  const iterator = RemoteLeaseObserver.connect(srv.base).watch();
  await iterator.next(); // the current state
  const wallNow = () => performance.timeOrigin + performance.now();
  const latencies: number[] = [];
  let fence = "";
  for (let i = 0; i < changes; i++) {
    const change = i % 2 === 0 ? cli(dir, ns, "bench", "try-acquire") : cli(dir, ns, "bench", "release", fence);
    const next = await iterator.next();
    const arrived = wallNow();
    const written = statSync(file).mtimeMs;
    const out = await change;
    if (i % 2 === 0) fence = out;
    const state = next.value as State;
    if (state.acquired !== (i % 2 === 0)) throw new Error(`change ${i}: unexpected state ${JSON.stringify(state)}`);
    latencies.push(arrived - written);
  }
  await iterator.return(undefined);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  console.log(
    JSON.stringify({
      changes: latencies.length,
      median_ms: +at(0.5).toFixed(2),
      p99_ms: +at(0.99).toFixed(2),
      min_ms: +(latencies[0] ?? 0).toFixed(2),
      max_ms: +(latencies.at(-1) ?? 0).toFixed(2),
    }),
  );
} finally {
  for (const child of running) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
