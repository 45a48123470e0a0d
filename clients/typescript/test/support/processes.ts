// Real lfp-swarm-lease processes: `serve` and `run` on a file store, and the one-shot commands,
// from the binary scripts/node-test.mjs builds. No node:test here, so that the benchmarks can
// use it too; server.ts adds the tests' cleanup.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The binary under test: LFP_SWARM_LEASE_BIN, set by `bun run node:test`. */
export function binary(): string {
  const bin = process.env.LFP_SWARM_LEASE_BIN;
  if (!bin) throw new Error("LFP_SWARM_LEASE_BIN is not set: run the tests with `bun run node:test`");
  return bin;
}

/** A unique election (namespace) name. */
export function namespace(prefix = "ts"): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

/** A running server process. */
export interface ServerProcess {
  /** http://127.0.0.1:PORT */
  base: string;
  /** The listen address, to restart on the same one. */
  addr: string;
  child: ChildProcess;
  /** Its stderr and stdout so far. */
  output(): string;
  /** Sends signal (default SIGKILL: most tests need no graceful stop) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** The processes started and not yet exited. */
export const running = new Set<ChildProcess>();

/**
 * Starts the binary with args and env (plus SWARM_LEASE_LISTEN, default 127.0.0.1:0) and
 * resolves once its `msg=listening addr=…` log line names its address.
 */
export function startProcess(
  args: string[],
  env: Record<string, string> = {},
  listen = "127.0.0.1:0",
): Promise<ServerProcess> {
  const child = spawn(binary(), args, {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SWARM_LEASE_LISTEN: listen, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let out = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  exited.then(() => running.delete(child));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not log its listen address within 15 s:\n${out}`));
    }, 15_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /msg=listening addr=(\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        const addr = m[1];
        resolve({
          base: `http://${addr}`,
          addr,
          child,
          output: () => out,
          stop: async (signal = "SIGKILL") => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited (${code}) before it listened:\n${out}`));
    });
  });
}

/** `serve` on the file store dir; with ns, it also serves that election's /v1 endpoints. */
export function startServe(dir: string, options: { ns?: string; args?: string[]; listen?: string } = {}) {
  const args = ["serve", "--store", `file://${dir}`];
  if (options.ns) args.push("--namespace", options.ns, "--default-poll-ms", "100");
  return startProcess([...args, ...(options.args ?? [])], {}, options.listen);
}

/** What a `run` replica contends with. */
export interface RunOptions {
  /** `file://<dir>` or `swarm`. */
  store: string;
  ns: string;
  holder: string;
  /** The lease TTL (default 3000). */
  ttlMs?: number;
  /** Extra environment (DOCKER_HOST for the Swarm store). */
  env?: Record<string, string>;
}

/** `run` as holder, contending for ns, with a child that sleeps; it serves the HTTP API on a free port. */
export function startRun(o: RunOptions) {
  return startProcess(
    [
      "run",
      "--store",
      o.store,
      "--namespace",
      o.ns,
      "--holder-id",
      o.holder,
      "--ttl-ms",
      String(o.ttlMs ?? 3000),
      "--default-poll-ms",
      "100",
      "--shutdown-timeout-ms",
      "500",
      "--",
      "sleep",
      "3600",
    ],
    o.env,
  );
}

/** Runs a one-shot command (try-acquire, release, init, …) on the file store dir; resolves its stdout. */
export async function cli(dir: string, ns: string, holder: string, ...args: string[]): Promise<string> {
  return cliOn(`file://${dir}`, {}, ns, holder, ...args);
}

/** Runs a one-shot command on store (`file://<dir>` or `swarm`, with env); resolves its stdout. */
export async function cliOn(
  store: string,
  env: Record<string, string>,
  ns: string,
  holder: string,
  ...args: string[]
): Promise<string> {
  const { stdout } = await execFileAsync(
    binary(),
    [...args, "--store", store, "--namespace", ns, "--holder-id", holder],
    {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    },
  );
  return stdout.trim();
}

/** Calls cond until it holds, or throws after timeoutMs naming what. */
export async function pollUntil(
  timeoutMs: number,
  what: string,
  cond: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20)); // the poll interval, not a synchronisation
  }
}

/** The value of a Prometheus metric without labels on base's /metrics. */
export async function metric(base: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** The base URL the vipFetch routes. */
export const vipBase = "http://vip.invalid";

/**
 * A fetch that plays the Swarm VIP in front of replicas: each request to vipBase goes to the
 * first replica still running. served counts the requests each replica got.
 */
export function vipFetch(replicas: ServerProcess[], served = new Map<string, number>()) {
  return async (input: Request): Promise<Response> => {
    const r = replicas.find((p) => p.child.exitCode === null && p.child.signalCode === null);
    if (!r) throw new TypeError("no replica is running");
    served.set(r.base, (served.get(r.base) ?? 0) + 1);
    return fetch(new Request(input.url.replace(vipBase, r.base), input));
  };
}
