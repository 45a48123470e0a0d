// The settings of a client, their defaults and their checks.

/** Where the client reports connection failures, reconnects and Hold's transitions; never a token. */
export interface Logger {
  /** Something that needs attention: a failing stream, a failed renewal. */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** A transition: following a leader, renewed after failures. */
  info?(message: string, fields?: Record<string, unknown>): void;
  /** Routine: a room watch ended by the server and reopened. */
  debug?(message: string, fields?: Record<string, unknown>): void;
}

/** Options of createLeaseClient and RemoteLeaseObserver.connect. Durations are in milliseconds. */
export interface ClientOptions {
  /** The fetch to use (default: globalThis.fetch); e.g. one that adds authentication for a proxy. */
  fetch?: (input: Request) => Promise<Response>;
  /** Bounds each request other than a stream, from sending to the end of the answer (default 10 000). */
  requestTimeoutMs?: number;
  /** How long a watch waits for its first state before it throws InitialTimeoutError (default 60 000). */
  initialTimeoutMs?: number;
  /** The shortest wait before a reconnect (default 250). */
  minBackoffMs?: number;
  /** The longest wait before a reconnect (default 30 000). */
  maxBackoffMs?: number;
  /**
   * How long a stream may deliver nothing, not even a keep-alive comment, before it is dropped
   * and reopened (default 45 000: three of the server's 15 s keep-alives; 0 disables it). Keep
   * it above the server's keep_alive_ms.
   */
  idleTimeoutMs?: number;
  /** Receives connection failures and transitions (default: nothing is logged). */
  logger?: Logger;
  /** The random source of back-off and renewal jitter, in [0, 1) (default Math.random). */
  jitter?: () => number;
}

/** The defaults, the same as the Go client's. */
export const defaults = {
  requestTimeoutMs: 10_000,
  initialTimeoutMs: 60_000,
  minBackoffMs: 250,
  maxBackoffMs: 30_000,
  idleTimeoutMs: 45_000,
} as const;

/** ClientOptions with every default applied. */
export interface Settings {
  fetch: (input: Request) => Promise<Response>;
  requestTimeoutMs: number;
  initialTimeoutMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  idleTimeoutMs: number;
  logger: Logger;
  jitter: () => number;
}

const silent: Logger = { warn() {} };

/** Applies the defaults and refuses invalid values with an error naming the option. */
export function settings(options: ClientOptions = {}): Settings {
  const s: Settings = {
    fetch: options.fetch ?? ((input) => globalThis.fetch(input)),
    requestTimeoutMs: options.requestTimeoutMs ?? defaults.requestTimeoutMs,
    initialTimeoutMs: options.initialTimeoutMs ?? defaults.initialTimeoutMs,
    minBackoffMs: options.minBackoffMs ?? defaults.minBackoffMs,
    maxBackoffMs: options.maxBackoffMs ?? defaults.maxBackoffMs,
    idleTimeoutMs: options.idleTimeoutMs ?? defaults.idleTimeoutMs,
    logger: options.logger ?? silent,
    jitter: options.jitter ?? Math.random,
  };
  positive("requestTimeoutMs", s.requestTimeoutMs);
  positive("initialTimeoutMs", s.initialTimeoutMs);
  positive("minBackoffMs", s.minBackoffMs);
  if (!(s.maxBackoffMs >= s.minBackoffMs)) {
    throw new RangeError(
      `lfp-swarm-lease: option maxBackoffMs (${s.maxBackoffMs}) must be at least minBackoffMs (${s.minBackoffMs})`,
    );
  }
  if (!(s.idleTimeoutMs >= 0)) {
    throw new RangeError(`lfp-swarm-lease: option idleTimeoutMs (${s.idleTimeoutMs}) must be 0 (off) or positive`);
  }
  return s;
}

function positive(name: string, value: number): void {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`lfp-swarm-lease: option ${name} (${value}) must be a positive number of milliseconds`);
  }
}

/** The URL of the server with a trailing path prefix kept and a trailing slash removed. */
export function baseUrlOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(
      `lfp-swarm-lease: invalid base URL ${JSON.stringify(baseUrl)}: want http:// or https:// and a host`,
    );
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.host === "") {
    throw new TypeError(
      `lfp-swarm-lease: invalid base URL ${JSON.stringify(baseUrl)}: want http:// or https:// and a host`,
    );
  }
  return url.href.replace(/\/+$/, "");
}
