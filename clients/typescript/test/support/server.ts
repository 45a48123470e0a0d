// The tests' side of processes.ts: every process and temporary store is gone after the test file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { running } from "./processes.js";

export * from "./processes.js";

after(() => {
  for (const child of running) child.kill("SIGKILL");
});

/** A new directory for a file store, removed after the test file. */
export function tempStore(): string {
  const dir = mkdtempSync(join(tmpdir(), "lfp-swarm-lease-ts-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
