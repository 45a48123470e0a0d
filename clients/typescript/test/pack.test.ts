// What `npm pack` puts into the published package: the compiled dist/ with its types, the
// README, the LICENSE when there is one, and package.json — no sources, tests or binaries.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const pkg = fileURLToPath(new URL("..", import.meta.url));

test("npm pack ships only dist/, types, README, LICENSE and package.json", () => {
  assert.ok(existsSync(`${pkg}/dist/index.js`), "dist/ is missing: run `bun run clients:build` first");
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkg, encoding: "utf8" });
  const [report] = JSON.parse(out) as [{ name: string; files: { path: string }[] }];
  assert.equal(report.name, "@regbo/lfp-swarm-lease");
  const paths = report.files.map((f) => f.path).sort();
  const allowed = /^(dist\/.+\.(js|d\.ts)|README\.md|LICENSE|package\.json)$/;
  for (const p of paths) assert.match(p, allowed, `${p} would be published`);
  for (const must of ["dist/index.js", "dist/index.d.ts", "dist/generated/openapi.d.ts", "README.md", "package.json"]) {
    assert.ok(paths.includes(must), `${must} is not in the package: ${paths.join(", ")}`);
  }
});

test("the runtime code uses no Node-only API (browsers: fetch and web streams only)", () => {
  const dist = `${pkg}/dist`;
  const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
  assert.ok(files.length > 0, "dist/ is empty: run `bun run clients:build` first");
  for (const f of files) {
    const code = readFileSync(`${dist}/${f}`, "utf8");
    for (const nodeOnly of [
      /from "node:/,
      /require\(/,
      /\bprocess\./,
      /\bBuffer\b/,
      /from "(fs|path|os|http|https|stream|util)"/,
    ]) {
      assert.doesNotMatch(code, nodeOnly, `dist/${f} uses ${nodeOnly}`);
    }
  }
});
