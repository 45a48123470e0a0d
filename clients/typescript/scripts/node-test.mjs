// `bun run node:test`: builds the lfp-swarm-lease binary the tests run against (real server
// processes, never mocks), then runs the tests on Node's own test runner.
//
//   node scripts/node-test.mjs [test files…]   # default: every test/*.test.ts
//
// The binary goes into a temporary directory removed afterwards; LFP_SWARM_LEASE_BIN names it
// for the tests. Set LFP_SWARM_LEASE_BIN yourself to test another binary.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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
// The spec reporter for people, and a TAP copy to count skipped tests: under CI=true a skipped
// test (a missing Docker engine, say) fails the run, so CI cannot pass without it.
const tap = join(tmp ?? mkdtempSync(join(tmpdir(), "lfp-swarm-lease-node-test-")), "report.tap");
const run = spawnSync(
  process.execPath,
  [
    // The abort tests collect garbage (see test/abort-gc.test.ts).
    "--expose-gc",
    "--import",
    "tsx",
    "--test",
    "--test-concurrency=2",
    // A failed test may leave a watch reconnecting or a term renewing: end the file anyway.
    "--test-force-exit",
    "--test-timeout=120000",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tap}`,
    ...tests,
  ],
  { cwd: pkg, stdio: "inherit", env: { ...process.env, LFP_SWARM_LEASE_BIN: bin } },
);
const skipped = readFileSync(tap, "utf8")
  .split("\n")
  .filter((line) => /^\s*ok \d+ .*# SKIP/.test(line));
rmSync(dirname(tap), { recursive: true, force: true });
if (run.status === 0 && skipped.length > 0 && process.env.CI === "true") {
  console.error(`node:test: CI=true and ${skipped.length} test(s) skipped:\n${skipped.join("\n")}`);
  process.exit(1);
}
process.exit(run.status ?? 1);
