// The waits between connection attempts.

/**
 * Computes the waits between attempts. The n-th consecutive failure (n = 0, 1, …) waits
 * between min and min·2^(n+1), capped at max: the floor keeps a restarted server from being
 * hammered, the random spread keeps its many clients from reconnecting in lockstep, and the
 * doubling ceiling backs off from a server that stays away.
 */
export class Backoff {
  #failures = 0;

  /** A back-off from minMs to maxMs drawing its spread from jitter (in [0, 1)). */
  constructor(
    readonly minMs: number,
    readonly maxMs: number,
    readonly jitter: () => number,
  ) {}

  /** The wait before the next attempt; counts one more failure. */
  next(): number {
    let ceiling = this.minMs;
    for (let i = 0; i <= this.#failures && ceiling < this.maxMs; i++) {
      ceiling = Math.min(ceiling * 2, this.maxMs);
    }
    this.#failures++;
    return this.minMs + safeJitter(this.jitter) * (ceiling - this.minMs);
  }

  /** Starts the doubling again: the connection worked. */
  reset(): void {
    this.#failures = 0;
  }
}

/** jitter() when it is in [0, 1), else 0: a broken random source must not break the bounds. */
export function safeJitter(jitter: () => number): number {
  const j = jitter();
  return j >= 0 && j < 1 ? j : 0;
}
