// `bun run node:test`: builds the lfp-swarm-lease binary the tests run against (real server
// processes, never mocks), then runs the tests on Node's own test runner.
//
//   node scripts/node-test.mjs [test files…]   # default: every test/*.test.ts
//
// The binary goes into a temporary directory removed afterwards; LFP_SWARM_LEASE_BIN names it
// for the tests. Set LFP_SWARM_LEASE_BIN yourself to test another binary.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = fileURLToPath(new URL("..", import.meta.url));
const repo = join(pkg, "..", "..");
let tmp;
let bin = process.env.LFP_SWARM_LEASE_BIN;
if (!bin) {
  tmp = mkdtempSync(join(tmpdir(), "lfp-swarm-lease-node-test-"));
  bin = join(tmp, "lfp-swarm-lease");
  console.log(`building ${bin}`);
  const build = spawnSync("go", ["build", "-o", bin, "./cli/cmd/lfp-swarm-lease"], { cwd: repo, stdio: "inherit" });
  if (build.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    console.error("node:test: go build ./cli/cmd/lfp-swarm-lease failed: the tests need the binary");
    process.exit(1);
  }
}
const files = process.argv.slice(2);
const tests = files.length
  ? files
  : readdirSync(join(pkg, "test"))
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => join("test", f));
const run = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...tests], {
  cwd: pkg,
  stdio: "inherit",
  env: { ...process.env, LFP_SWARM_LEASE_BIN: bin },
});
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(run.status ?? 1);
