// The data of the events the watches yield, checked against the contract (clients/openapi.json)
// field by field: a value that is not a JSON object with every field the contract requires, each
// of its type, comes from something other than a server of the contract (a proxy's page, another
// version, a broken peer), and a watch that yielded it would hand the consumer a null or partial
// state as if it were the election's. The Go client checks the same fields in the same order and
// words its errors alike. Fields the contract does not have are dropped: a later server may add
// some.
import type { ElectionLeader, RoomState, State } from "./types.js";

/** Why an event's data is not a state; the watch drops the stream with it. */
class WireError extends Error {}

/** Names the kind of a JSON value, for errors: they say what came instead of repeating it. */
function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    default:
      return "an object";
  }
}

/** An RFC 3339 date-time, as the contract's format date-time has it. */
const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function isTime(value: unknown): value is string {
  return typeof value === "string" && rfc3339.test(value) && !Number.isNaN(Date.parse(value));
}

/** The fields of one JSON object, read one by one; the first that is wrong throws. */
class WireObject {
  constructor(
    private readonly fields: Record<string, unknown>,
    /** The object's place in the event ("leader."), for errors. */
    private readonly path = "",
  ) {}

  /** Parses an event's data, which must be a JSON object. */
  static parse(data: string): WireObject {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch (error) {
      // The parser's message may quote the data: keep it short.
      throw new WireError(`not JSON: ${String((error as Error).message).slice(0, 100)}`);
    }
    if (kind(value) !== "an object") throw new WireError(`want a JSON object, got ${kind(value)}`);
    return new WireObject(value as Record<string, unknown>);
  }

  /** Throws that the named field is not want. */
  check(name: string, ok: boolean, want: string): void {
    if (!ok) throw new WireError(`field ${JSON.stringify(this.path + name)}: want ${want}`);
  }

  string(name: string): string {
    const v = this.#value(name);
    if (typeof v !== "string") this.#wrong(name, "a string", v);
    return v as string;
  }

  /** string for a field the contract may omit (undefined then). */
  optionalString(name: string): string | undefined {
    return Object.hasOwn(this.fields, name) ? this.string(name) : undefined;
  }

  boolean(name: string): boolean {
    const v = this.#value(name);
    if (typeof v !== "boolean") this.#wrong(name, "a boolean", v);
    return v as boolean;
  }

  /** A non-negative integer: any JSON number with a whole, non-negative value. */
  uint(name: string): number {
    const v = this.#value(name);
    if (!Number.isInteger(v) || (v as number) < 0) this.#wrong(name, "a non-negative integer", v);
    return v as number;
  }

  int(name: string): number {
    const v = this.#value(name);
    if (!Number.isInteger(v)) this.#wrong(name, "an integer", v);
    return v as number;
  }

  time(name: string): string {
    const v = this.#value(name);
    if (!isTime(v)) this.#wrong(name, "an RFC 3339 time", v);
    return v as string;
  }

  /** A time the contract allows to be null. */
  timeOrNull(name: string): string | null {
    const v = this.#value(name);
    if (v !== null && !isTime(v)) this.#wrong(name, "an RFC 3339 time or null", v);
    return v as string | null;
  }

  /** An object the contract allows to be null; its faults are the event's. */
  objectOrNull(name: string): WireObject | null {
    const v = this.#value(name);
    if (v === null) return null;
    if (kind(v) !== "an object") this.#wrong(name, "an object or null", v);
    return new WireObject(v as Record<string, unknown>, `${this.path}${name}.`);
  }

  #value(name: string): unknown {
    if (!Object.hasOwn(this.fields, name)) throw new WireError(`field ${JSON.stringify(this.path + name)}: missing`);
    return this.fields[name];
  }

  #wrong(name: string, want: string, value: unknown): never {
    throw new WireError(`field ${JSON.stringify(this.path + name)}: want ${want}, got ${kind(value)}`);
  }
}

/** The State of an event of GET /v1/events: every field of the contract's State is required, the times may be null. */
export function decodeState(data: string): State {
  const o = WireObject.parse(data);
  return {
    namespace: o.string("namespace"),
    exists: o.boolean("exists"),
    acquired: o.boolean("acquired"),
    holder_id: o.string("holder_id"),
    node_id: o.string("node_id"),
    task_id: o.string("task_id"),
    fence: o.uint("fence"),
    acquired_at: o.timeOrNull("acquired_at"),
    renewed_at: o.timeOrNull("renewed_at"),
    expires_at: o.timeOrNull("expires_at"),
    ttl_ms: o.int("ttl_ms"),
  };
}

/**
 * The state of a frame of roomId's watch stream: a WatchFrame of schema version 1, of that room,
 * whose leader is an object when the status is leader and null when it is vacant.
 */
export function decodeWatchFrame(data: string, roomId: string): RoomState {
  const o = WireObject.parse(data);
  o.check("schema_version", o.uint("schema_version") === 1, "1");
  const id = o.string("election_id");
  // A proxy that mixed up its routes would show another room's leader as this one's.
  o.check("election_id", id === roomId, JSON.stringify(roomId));
  const status = o.string("status");
  o.check("status", status === "leader" || status === "vacant", `"leader" or "vacant"`);
  const l = o.objectOrNull("leader");
  let leader: ElectionLeader | null = null;
  if (l) {
    leader = { candidate_id: l.string("candidate_id"), term: l.uint("term"), expires_at: l.time("expires_at") };
    const metadata = l.optionalString("metadata");
    if (metadata !== undefined) leader.metadata = metadata;
  }
  if ((status === "leader") !== (leader !== null)) {
    throw new WireError(`status ${JSON.stringify(status)} ${leader ? "with" : "without"} a leader`);
  }
  return {
    election_id: id,
    status: status as RoomState["status"],
    leader,
    retry_after_ms: o.int("retry_after_ms"),
    observed_at: o.time("observed_at"),
  };
}
