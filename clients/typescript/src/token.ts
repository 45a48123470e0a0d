// The leader token: the bearer capability of one term. It is kept in a private field so that
// nothing that prints, logs or serialises an object of the client can show it by accident.

const redacted = "[redacted]";

/**
 * A leader token. `toString`, `JSON.stringify` and `util.inspect` (console.log) show
 * "[redacted]"; `reveal()` returns the value, for a request body — never put it in a URL.
 */
export class LeaderToken {
  readonly #value: string;

  /** Wraps a token received from the server. */
  constructor(value: string) {
    this.#value = value;
  }

  /** The token itself, to send in a request body. */
  reveal(): string {
    return this.#value;
  }

  /** "[redacted]". */
  toString(): string {
    return redacted;
  }

  /** "[redacted]": JSON.stringify of a result never carries the token. */
  toJSON(): string {
    return redacted;
  }

  /** Node's util.inspect (console.log) shows "[redacted]" too. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `LeaderToken ${redacted}`;
  }
}
