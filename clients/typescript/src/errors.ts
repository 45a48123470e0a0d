// The errors the client throws: the server's error answers as LeaseApiError, and the ends of
// watches that never got what they waited for.
import type { ErrorBody } from "./types.js";

/** Options common to the client's errors. */
interface CauseOption {
  cause?: unknown;
}

/**
 * A response other than the expected one: a non-2xx answer, or an answer other than an event
 * stream. Its fields come from the server's error body (`{error, code, details, request_id,
 * retry_after_ms}`); a proxy's answer in front of the server leaves `code` empty. It never
 * contains a leader token: the server never echoes one.
 */
export class LeaseApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The server's stable, machine-readable code ("lease_not_current", "rate_limited", …); "" from a proxy. */
  readonly code: string;
  /** Specifics, when any. */
  readonly details: string;
  /** The request's id in the server's logs (body or X-Request-Id header). */
  readonly requestId: string;
  /** How long the server asked the client to wait, in ms: the larger of retry_after_ms and Retry-After (0: it did not say). */
  readonly retryAfterMs: number;

  /** Builds the error of an answer; use `LeaseApiError.fromResponse` for a fetch Response. */
  constructor(
    init: {
      status: number;
      code?: string;
      message?: string;
      details?: string;
      requestId?: string;
      retryAfterMs?: number;
    },
    options?: CauseOption,
  ) {
    const code = init.code ?? "";
    const requestId = init.requestId ?? "";
    let text = `HTTP ${init.status}`;
    if (code) text += ` ${code}`;
    if (init.message) text += `: ${init.message}`;
    if (init.details) text += ` (${init.details})`;
    if (requestId) text += ` [request ${requestId}]`;
    super(text, options);
    this.name = "LeaseApiError";
    this.status = init.status;
    this.code = code;
    this.details = init.details ?? "";
    this.requestId = requestId;
    this.retryAfterMs = init.retryAfterMs ?? 0;
  }

  /**
   * The error of a non-2xx response, from its body (already parsed by the caller, or read here
   * as text, at most 64 KiB) and its X-Request-Id and Retry-After headers.
   */
  static async fromResponse(response: Response, body?: unknown): Promise<LeaseApiError> {
    let parsed = body;
    if (parsed === undefined) {
      const text = await readLimited(response, 64 << 10);
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    const wire = isErrorBody(parsed) ? parsed : undefined;
    let message = wire?.error ?? "";
    if (!wire && typeof parsed === "string" && parsed.trim() !== "" && parsed.trim().length <= 200) {
      message = parsed.trim(); // a proxy's short answer ("Bad Gateway") is still worth showing
    }
    return new LeaseApiError({
      status: response.status,
      code: wire?.code,
      message: message || response.statusText,
      details: wire?.details,
      requestId: wire?.request_id || response.headers.get("X-Request-Id") || "",
      retryAfterMs: Math.max(wire?.retry_after_ms ?? 0, retryAfterHeaderMs(response.headers)),
    });
  }

  /**
   * Whether the same request may succeed later: rate and capacity limits, timeouts, server
   * failures, and answers without the server's code (a proxy in front of it, a replica starting).
   */
  get temporary(): boolean {
    return (
      this.code === "" ||
      this.status === 429 ||
      this.status === 408 ||
      this.code === "capacity_exceeded" ||
      this.status >= 500
    );
  }

  /** 404 or 400 `lease_not_current`: the token's term no longer holds the room. */
  get leaseNotCurrent(): boolean {
    return this.code === "lease_not_current";
  }
}

/** Thrown by a watch that received no state within its initial timeout; `cause` is the last failure. */
export class InitialTimeoutError extends Error {
  /** The initial timeout that passed, in ms. */
  readonly timeoutMs: number;

  /** The error of a wait of timeoutMs that ended without a state. */
  constructor(timeoutMs: number, options?: CauseOption) {
    const last = options?.cause instanceof Error ? `; last error: ${options.cause.message}` : "";
    super(`no state within the initial timeout (${timeoutMs} ms)${last}`, options);
    this.name = "InitialTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** Thrown by waitForHolder when states came but none had a holder within the timeout. */
export class NoHolderError extends Error {
  /** The last state received. */
  readonly lastState: unknown;

  /** The error of a wait of timeoutMs whose last state was lastState. */
  constructor(timeoutMs: number, lastState: unknown) {
    super(`no holder within the timeout (${timeoutMs} ms): the last state has none`);
    this.name = "NoHolderError";
    this.lastState = lastState;
  }
}

function isErrorBody(v: unknown): v is ErrorBody {
  return typeof v === "object" && v !== null && typeof (v as ErrorBody).code === "string";
}

/** Retry-After in ms: seconds only (an HTTP date from a proxy is rare enough to ignore). */
function retryAfterHeaderMs(headers: Headers): number {
  const value = headers.get("Retry-After")?.trim() ?? "";
  if (!/^\d+$/.test(value)) return 0;
  return Number(value) * 1000;
}

async function readLimited(response: Response, limit: number): Promise<string> {
  if (!response.body || response.bodyUsed) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // A body cut short still gives the status and headers.
  } finally {
    reader.cancel().catch(() => {});
  }
  return text.slice(0, limit);
}

/** Why a Leadership ended: see LeadershipEndedError.reason. */
export type LeadershipEndReason = "lost" | "deadline" | "resigned" | "aborted";

/**
 * The cause of a Leadership's end. `reason` is "lost" (the server says the term is over — its
 * cause is then the server's LeaseApiError, or the renewal's other answer), "deadline" (the
 * safety deadline, less stopBeforeMs, came without a successful renewal: the room may be taken
 * over from then), "resigned" (resign() was called) or "aborted" (hold's signal; its cause is
 * the signal's reason).
 */
export class LeadershipEndedError extends Error {
  /** Why the term ended. */
  readonly reason: LeadershipEndReason;

  /** The end of a term for reason. */
  constructor(reason: LeadershipEndReason, message: string, options?: CauseOption) {
    super(`leadership ended (${reason}): ${message}`, options);
    this.name = "LeadershipEndedError";
    this.reason = reason;
  }
}
