// The client in a real browser: headless Chromium loads a page that imports the bundled client
// from the same origin as a real `serve` (a small proxy in front of both, as a reverse proxy
// would be), watches the election and holds a room. Without Chromium the test is skipped — and
// fails under CI=true.
import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromiumSkip, launchChromium } from "@regbo/test-chromium";
import { build } from "esbuild";
import { createLeaseClient } from "../src/index.js";
import { cli, namespace, pollUntil, startServe, tempStore } from "./support/server.js";

const page = `<!doctype html><meta charset="utf-8"><title>lfp-swarm-lease</title>
<script type="module">
  import { RemoteLeaseObserver, createLeaseClient } from "/client.js";
  window.states = [];
  window.run = async (room) => {
    const l = await createLeaseClient(location.origin).hold(room, "browser", { ttlSeconds: 10 });
    return { term: l.term, shown: String(l) + JSON.stringify(l) };
  };
  for await (const s of RemoteLeaseObserver.connect(location.origin).watch()) window.states.push(s);
</script>`;

/** Serves the page and the bundle, and proxies everything else to upstream (streams included). */
async function sameOrigin(upstream: string, bundle: string): Promise<string> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    if (req.url === "/") return res.writeHead(200, { "Content-Type": "text/html" }).end(page);
    if (req.url === "/client.js") return res.writeHead(200, { "Content-Type": "text/javascript" }).end(bundle);
    const proxied = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    proxied.on("error", () => res.destroy());
    req.pipe(proxied);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("in Chromium: watch an election and hold a room from a same-origin page", { skip: chromiumSkip() }, async () => {
  const dir = tempStore();
  const ns = namespace();
  const srv = await startServe(dir, { ns });
  const bundled = await build({
    entryPoints: [fileURLToPath(new URL("../src/index.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
  });
  const origin = await sameOrigin(srv.base, bundled.outputFiles[0]?.text ?? "");
  const browser = await launchChromium();
  after(() => browser.close());
  const tab = await browser.newPage();
  const errors: string[] = [];
  tab.on("pageerror", (e) => errors.push(String(e)));
  await tab.goto(origin);
  const states = () => tab.evaluate(() => (window as unknown as { states: { holder_id: string }[] }).states);
  await pollUntil(15_000, "the page's first state", async () => (await states()).length >= 1);
  await cli(dir, ns, "alice", "try-acquire");
  await pollUntil(15_000, "the page sees alice", async () => (await states()).some((s) => s.holder_id === "alice"));

  const room = (await createLeaseClient(srv.base).createElection()).election_id;
  const held = await tab.evaluate(
    (r) => (window as unknown as { run: (r: string) => Promise<{ term: number; shown: string }> }).run(r),
    room,
  );
  const status = await createLeaseClient(srv.base).status(room);
  assert.equal(status.leader?.candidate_id, "browser");
  assert.equal(status.leader?.term, held.term);
  assert.doesNotMatch(held.shown, /leader_token|tok/);
  assert.deepEqual(errors, []);
});
