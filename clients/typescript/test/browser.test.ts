// The client in a real browser: headless Chromium loads a page that imports the bundled client
// from the same origin as a real `serve` (a small proxy in front of both, as a reverse proxy
// would be), watches the election and holds a room; a page of another origin does the same
// against a `serve` with cors_allowed_origins, and is refused by one without. Without Chromium
// the tests are skipped — and fail under CI=true.
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
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
    return { term: l.fence, shown: String(l) + JSON.stringify(l) };
  };
  for await (const s of RemoteLeaseObserver.connect(location.origin).watch()) window.states.push(s);
</script>`;

/** The client bundled for the browser, as the pages import it from /client.js. */
async function clientBundle(): Promise<string> {
  const bundled = await build({
    entryPoints: [fileURLToPath(new URL("../src/index.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
  });
  return bundled.outputFiles[0]?.text ?? "";
}

/** Listens on a free loopback port until the test file ends; returns the origin. */
async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Opens origin in a new headless Chromium, closed after the test file, collecting page errors. */
async function openPage(origin: string) {
  const browser = await launchChromium();
  after(() => browser.close());
  const tab = await browser.newPage();
  const errors: string[] = [];
  tab.on("pageerror", (e) => errors.push(String(e)));
  await tab.goto(origin);
  return { tab, errors };
}

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
  return listenLocal(server);
}

test("in Chromium: watch an election and hold a room from a same-origin page", { skip: chromiumSkip() }, async () => {
  const dir = tempStore();
  const ns = namespace();
  const srv = await startServe(dir, { ns });
  const origin = await sameOrigin(srv.base, await clientBundle());
  const { tab, errors } = await openPage(origin);
  const states = () => tab.evaluate(() => (window as unknown as { states: { holder_id: string }[] }).states);
  await pollUntil(15_000, "the page's first state", async () => (await states()).length >= 1);
  await cli(dir, ns, "alice", "try-acquire");
  await pollUntil(15_000, "the page sees alice", async () => (await states()).some((s) => s.holder_id === "alice"));

  const room = (await createLeaseClient(srv.base).createRoom()).election_id;
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

/** The page of another origin: it calls the server at a base URL of its own choosing. */
const crossOriginPage = `<!doctype html><meta charset="utf-8"><title>dashboard</title>
<script type="module">
  import { RemoteLeaseObserver, createLeaseClient } from "/client.js";
  window.run = async (base) => {
    const c = createLeaseClient(base);
    const room = (await c.createRoom()).election_id;
    const seen = [];
    const ac = new AbortController();
    const watching = (async () => {
      for await (const s of c.watchRoom(room, { signal: ac.signal })) {
        seen.push(s.leader?.candidate_id ?? "");
        if (s.leader?.candidate_id === "dashboard") return;
      }
    })();
    const l = await c.hold(room, "dashboard", { ttlSeconds: 10 });
    await watching;
    const states = [];
    for await (const s of RemoteLeaseObserver.connect(base).watch({ signal: AbortSignal.timeout(10000) })) {
      states.push(s);
      break;
    }
    await l.resign();
    return { room, term: l.fence, seen, events: states.length };
  };
  window.tryCreate = (base) => createLeaseClient(base).createRoom().then(() => "created", (e) => String(e));
</script>`;

/** Serves the cross-origin page and the bundle only, on an origin of its own. */
async function pageOrigin(bundle: string): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === "/") return res.writeHead(200, { "Content-Type": "text/html" }).end(crossOriginPage);
    if (req.url === "/client.js") return res.writeHead(200, { "Content-Type": "text/javascript" }).end(bundle);
    res.writeHead(404).end();
  });
  return listenLocal(server);
}

test("in Chromium: a page on another origin creates, campaigns in and watches a room through cors_allowed_origins", {
  skip: chromiumSkip(),
}, async () => {
  const origin = await pageOrigin(await clientBundle());
  const ns = namespace();
  const allowed = await startServe(tempStore(), { ns, args: ["--cors-allowed-origins", origin] });
  const closed = await startServe(tempStore()); // no CORS: the browser must refuse the page its answers
  const { tab, errors } = await openPage(origin);
  await tab.waitForFunction(() => "run" in window);

  const got = await tab.evaluate(
    (base) =>
      (
        window as unknown as {
          run: (b: string) => Promise<{ room: string; term: number; seen: string[]; events: number }>;
        }
      ).run(base),
    allowed.base,
  );
  assert.ok(got.term > 0, `term ${got.term}`);
  assert.equal(got.seen.at(-1), "dashboard", `the room watch saw ${JSON.stringify(got.seen)}`);
  assert.equal(got.events, 1, "the page read the election's event stream");
  const status = await createLeaseClient(allowed.base).status(got.room);
  assert.ok(!status.leader, "the page resigned its term");

  const refused = await tab.evaluate(
    (base) => (window as unknown as { tryCreate: (b: string) => Promise<string> }).tryCreate(base),
    closed.base,
  );
  assert.notEqual(refused, "created", "a server without cors_allowed_origins answered a page of another origin");
  assert.deepEqual(errors, []);
});
