// One watch of a server-sent-events endpoint whose every connection starts with the complete
// current state: the observer on GET /v1/events, watchRoom and hold's follower on
// GET /elections/{id}/watch. It owns the connections, back-off, timeouts and de-duplication.
import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";
import { abortable, childController, discardBody, now, sleep } from "./abort.js";
import { Backoff } from "./backoff.js";
import { InitialTimeoutError, LeaseApiError } from "./errors.js";
import type { Settings } from "./options.js";

/** What to read, whom to hand it, and where the two endpoints' policies differ. */
export interface StreamSpec<T> {
  /** The stream's URL. */
  url: string;
  settings: Settings;
  /** Bounds the wait for the first state; 0: no bound but the signal. */
  initialTimeoutMs: number;
  /** What should answer at url, for the error of an answer that is no event stream. */
  server: string;
  /** The event types that carry a state; other types, of later server versions, are skipped. */
  stateEvents: readonly string[];
  /** Parses an event's data; throws why when it is not a state: a value off the contract is never yielded. */
  decode(data: string): T;
  /** Whether b shows what a showed: a replay the consumer already has. */
  same(a: T, b: T): boolean;
  /** Ends the watch with an answer that retrying cannot change, instead of retrying it. */
  endOnPermanentAnswer: boolean;
  /** Bounds a server's Retry-After by the maximum back-off. */
  capRetryAfter: boolean;
  /** How each reconnect is logged. */
  reconnectLevel: "warn" | "debug";
  reconnectMessage: string;
}

/**
 * Bounds one event: its data so far and the line being read, in characters. A State or a watch
 * frame is well under 1 KiB; a larger event is not from an lfp-swarm-lease server, and buffering
 * it without bound would let such a peer exhaust memory. The Go client has the same bound.
 */
const maxEvent = 1 << 20;

/** Names an event for an error: its type and id, each cut short, since a misbehaving peer chooses them. */
function describeEvent(name: string, id: string | undefined): string {
  const quoteShort = (s: string) => (s.length <= 64 ? JSON.stringify(s) : `${JSON.stringify(s.slice(0, 64))}…`);
  return `event ${quoteShort(name)}${id ? ` (id ${quoteShort(id)})` : ""}`;
}

/** Why a connection was cut by the client itself. */
const idleCut = new Error("nothing received within the idle timeout");
const initialCut = new Error("the initial timeout passed");

/** A failure that ends the watch: retrying cannot change it. */
class Permanent {
  constructor(readonly error: unknown) {}
}

/**
 * Yields each state different from the one before it, reconnecting as StreamSpec says. Before
 * the first state, it throws InitialTimeoutError (its cause: the last failure) when the initial
 * timeout passes; after it, it reconnects until signal aborts, then returns. Stopping the
 * iteration (break) closes the open connection.
 */
export async function* watchStream<T>(spec: StreamSpec<T>, signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
  const s = spec.settings;
  const initialDeadline = spec.initialTimeoutMs > 0 ? now() + spec.initialTimeoutMs : Number.POSITIVE_INFINITY;
  const backoff = new Backoff(s.minBackoffMs, s.maxBackoffMs, s.jitter);
  const initialTimeout = (cause: unknown) => new InitialTimeoutError(spec.initialTimeoutMs, { cause });
  let started = false;
  let last: T | undefined;
  let lastError: unknown;

  for (;;) {
    if (signal?.aborted) return;
    const conn = childController(signal);
    let cutBy: Error | undefined;
    const cut = (why: Error) => {
      cutBy ??= why;
      conn.controller.abort(why);
    };
    let initialTimer: ReturnType<typeof setTimeout> | undefined;
    if (!started && Number.isFinite(initialDeadline)) {
      initialTimer = setTimeout(() => cut(initialCut), initialDeadline - now());
    }
    // The idle timer runs from the request on: a server that accepts the connection but never
    // answers (its store unreachable) is as dead as one that stops sending.
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const stopIdle = () => clearTimeout(idleTimer);
    const armIdle = () => {
      if (s.idleTimeoutMs > 0) {
        stopIdle();
        idleTimer = setTimeout(() => cut(idleCut), s.idleTimeoutMs);
      }
    };
    armIdle();
    let phase = "no response";
    // Held for the whole connection: fetch follows the request's signal only while it lives.
    let request: Request | undefined;
    let delivered = false;
    let failure: unknown;
    try {
      request = new Request(spec.url, {
        headers: { Accept: "text/event-stream", "Cache-Control": "no-cache" },
        signal: conn.controller.signal,
      });
      const response = await abortable(s.fetch(request), conn.controller.signal, discardBody);
      if (response.status !== 200) {
        const error = await LeaseApiError.fromResponse(response);
        throw spec.endOnPermanentAnswer && !error.temporary ? new Permanent(error) : error;
      }
      const type = response.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
      if (type !== "text/event-stream" || !response.body) {
        await response.body?.cancel().catch(() => {});
        throw new Error(
          `GET ${spec.url}: content type ${JSON.stringify(type ?? "")}, want text/event-stream (is this ${spec.server}?)`,
        );
      }
      phase = "connected, but no state event";
      const reader = response.body.getReader();
      // Cancelling the reader ends a pending read at once, whether or not the abort reaches fetch.
      const cancel = () => reader.cancel(conn.controller.signal.reason).catch(() => {});
      conn.controller.signal.addEventListener("abort", cancel, { once: true });
      try {
        const events: EventSourceMessage[] = [];
        let parseError: ParseError | undefined;
        const parser = createParser({
          onEvent: (event) => events.push(event),
          onError: (error) => {
            if (error.type === "max-buffer-size-exceeded") parseError = error;
          },
          maxBufferSize: maxEvent,
        });
        const decoder = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            if (conn.controller.signal.aborted) throw conn.controller.signal.reason;
            throw new Error(`GET ${spec.url}: the server ended the stream`);
          }
          armIdle(); // any data, keep-alive comments included, shows the connection lives
          parser.feed(decoder.decode(value, { stream: true }));
          // Not from a server of the contract: the stream cannot be trusted from here on.
          if (parseError) throw new Error(`GET ${spec.url}: an event larger than ${maxEvent} characters`);
          for (let event = events.shift(); event; event = events.shift()) {
            const name = event.event ?? "message";
            if (!spec.stateEvents.includes(name)) continue; // an event type of a later server version
            let state: T;
            try {
              state = spec.decode(event.data);
            } catch (error) {
              // Not a state: the stream cannot be trusted from here on.
              const why = error instanceof Error ? error.message : String(error);
              throw new Error(`GET ${spec.url}: ${describeEvent(name, event.id)}: invalid state: ${why}`, {
                cause: error,
              });
            }
            delivered = true;
            phase = "no data";
            if (!started) {
              started = true;
              clearTimeout(initialTimer);
            } else if (spec.same(last as T, state)) {
              continue; // a replay of what the consumer already has
            }
            last = state;
            stopIdle(); // the consumer's time is not the stream's silence
            yield state;
            armIdle();
          }
        }
      } finally {
        conn.controller.signal.removeEventListener("abort", cancel);
        reader.cancel().catch(() => {});
      }
    } catch (error) {
      failure = cutBy ? new Error(`GET ${spec.url}: ${phase} (${cutBy.message})`, { cause: cutBy }) : error;
    } finally {
      clearTimeout(initialTimer);
      stopIdle();
      conn.release();
      conn.controller.abort();
      request = undefined;
    }

    if (signal?.aborted) return;
    if (failure instanceof Permanent) throw failure.error;
    // An attempt cut short by the initial deadline says less than a failure before it.
    if (lastError === undefined || cutBy !== initialCut) lastError = failure;
    if (delivered) backoff.reset();
    if (!started && now() >= initialDeadline) throw initialTimeout(lastError);
    let delay = backoff.next();
    if (failure instanceof LeaseApiError && failure.retryAfterMs > delay) {
      delay = failure.retryAfterMs; // the server knows when it will have room
      if (spec.capRetryAfter) delay = Math.min(delay, s.maxBackoffMs);
    }
    const log = spec.reconnectLevel === "warn" ? s.logger.warn : s.logger.debug;
    log?.call(s.logger, spec.reconnectMessage, { url: spec.url, error: String(failure), delayMs: Math.round(delay) });
    // Before the first state the wait also ends at the initial deadline.
    await sleep(started ? delay : Math.min(delay, initialDeadline - now()), signal);
    if (signal?.aborted) return;
    if (!started && now() >= initialDeadline) throw initialTimeout(lastError);
  }
}
