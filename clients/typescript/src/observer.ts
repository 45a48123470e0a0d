// RemoteLeaseObserver: follows one election through a controller's GET /v1/events.
import { childController } from "./abort.js";
import { InitialTimeoutError, NoHolderError } from "./errors.js";
import { baseUrlOf, type ClientOptions, type Settings, settings } from "./options.js";
import { type StreamSpec, watchStream } from "./stream-watch.js";
import { hasHolder, type State } from "./types.js";
import { decodeState } from "./wire.js";

/** Options of one watch. */
export interface WatchOptions {
  /** Ends the watch: the iteration then finishes without an error, and the connection is closed. */
  signal?: AbortSignal;
}

/**
 * Follows one election through the controller endpoints at a base URL (an lfp-swarm-lease
 * `run` replica, `serve` with a namespace, or a Swarm service's VIP). It holds only
 * configuration: every watch has connections and de-duplication of its own.
 */
export class RemoteLeaseObserver {
  readonly #events: string;
  readonly #settings: Settings;

  private constructor(baseUrl: string, options?: ClientOptions) {
    this.#events = `${baseUrlOf(baseUrl)}/v1/events`;
    this.#settings = settings(options);
  }

  /**
   * An observer of the controller at baseUrl ("http://leases:8080"; a path prefix of a reverse
   * proxy is kept). It connects nothing yet; an invalid URL or option throws here.
   */
  static connect(baseUrl: string, options?: ClientOptions): RemoteLeaseObserver {
    return new RemoteLeaseObserver(baseUrl, options);
  }

  /**
   * The states of the election, each different from the one before it (holder, fence or
   * liveness; timestamps are not compared, so renewals are no change): first the current state,
   * then every change.
   *
   * It waits up to initialTimeoutMs (60 s) for the first state, retrying failed connections,
   * then throws InitialTimeoutError (its cause: the last failure). After the first state it
   * reconnects forever, with jittered exponential back-off; failures from then on go to the
   * logger. A replica replaying the state already yielded (after a controller restart, or a
   * reconnect to another replica) yields nothing. The iteration ends without an error when
   * options.signal aborts.
   */
  watch(options: WatchOptions = {}): AsyncGenerator<State, void, undefined> {
    return watchStream(this.#spec(this.#settings.initialTimeoutMs), options.signal);
  }

  /**
   * The first state with a live holder, skipping states without one, waiting at most timeoutMs
   * (0: no limit but the signal and the initial timeout). Without any state in time it throws
   * InitialTimeoutError; with states but no holder, NoHolderError carrying the last state; when
   * the signal aborts first, its reason.
   */
  async waitForHolder(timeoutMs: number, options: WatchOptions = {}): Promise<State> {
    const { controller, release } = childController(options.signal);
    const limited = timeoutMs > 0;
    const timer = limited ? setTimeout(() => controller.abort(new Error("timeout")), timeoutMs) : undefined;
    const initial = limited ? Math.min(timeoutMs, this.#settings.initialTimeoutMs) : this.#settings.initialTimeoutMs;
    let last: State | undefined;
    try {
      for await (const state of watchStream(this.#spec(initial), controller.signal)) {
        if (hasHolder(state)) return state;
        last = state;
      }
    } finally {
      clearTimeout(timer);
      release();
    }
    if (options.signal?.aborted) throw options.signal.reason;
    if (last === undefined) throw new InitialTimeoutError(timeoutMs);
    throw new NoHolderError(timeoutMs, last);
  }

  #spec(initialTimeoutMs: number): StreamSpec<State> {
    const s = this.#settings;
    const url = this.#events;
    return {
      url,
      settings: s,
      initialTimeoutMs,
      server: "an lfp-swarm-lease controller",
      stateEvents: ["current", "change", "message"],
      decode: decodeState,
      same: (a, b) => !changed(a, b),
      // Every answer is retried: a wrong one comes from a replica or proxy in a bad moment, and
      // the Swarm VIP may send the next connection to another replica.
      endOnPermanentAnswer: false,
      // too_many_clients is one replica's limit: its Retry-After need not hold the observer
      // longer than a back-off.
      capRetryAfter: true,
      // A controller ends a stream only when it stops or the client lags: worth a warning.
      reconnectLevel: "warn",
      reconnectMessage: "lfp-swarm-lease: event stream failed; reconnecting",
    };
  }
}

/** Whether b is another state of the election than a; timestamps are ignored, like the server's own filter. */
export function changed(a: State, b: State): boolean {
  return (
    a.exists !== b.exists ||
    a.acquired !== b.acquired ||
    a.holder_id !== b.holder_id ||
    a.node_id !== b.node_id ||
    a.task_id !== b.task_id ||
    a.fence !== b.fence
  );
}
