// The watches' decoders against the committed contract (../openapi.json), as the Go client's
// TestEventDecodersRequireTheContract: an event with every property of its schema decodes;
// without a required one it is refused, naming it; without an optional one it still decodes.
// The examples must have every property of the schema, so a property the contract adds fails
// here until the decoder knows it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { decodeState, decodeWatchFrame } from "../src/wire.js";

interface Schema {
  properties: Record<string, unknown>;
  required: string[];
}

const schemas: Record<string, Schema> = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"))
  .components.schemas;

const room = "room-abcdefgh";

const state = {
  namespace: "demo",
  exists: true,
  acquired: true,
  holder_id: "a",
  node_id: "n-a",
  task_id: "t-a",
  fence: 7,
  acquired_at: "2030-01-02T03:04:05Z",
  renewed_at: "2030-01-02T03:04:06.5Z",
  expires_at: null,
  ttl_ms: 30000,
};
const leader = { candidate_id: "a", term: 3, expires_at: "2030-01-02T03:04:05.000Z", metadata: "m" };
const watchFrame = {
  schema_version: 1,
  election_id: room,
  status: "leader",
  retry_after_ms: 5000,
  observed_at: "2030-01-02T03:04:00Z",
  leader,
};

const decodeFrame = (data: string) => decodeWatchFrame(data, room);

describe("the event decoders require what the contract requires", () => {
  for (const [schema, example, wrap, decode, prefix] of [
    ["State", state, (m: object) => m, decodeState, ""],
    ["WatchFrame", watchFrame, (m: object) => m, decodeFrame, ""],
    ["ElectionLeader", leader, (m: object) => ({ ...watchFrame, leader: m }), decodeFrame, "leader."],
  ] as const) {
    test(schema, () => {
      const s = schemas[schema];
      assert.ok(s, `the contract has no schema ${schema}`);
      assert.deepEqual(Object.keys(example).sort(), Object.keys(s.properties).sort(), "the example's properties");
      const event = (m: object) => JSON.stringify(wrap(m));
      decode(event(example));
      for (const p of Object.keys(s.properties)) {
        const m: Record<string, unknown> = { ...example };
        delete m[p];
        if (!s.required.includes(p)) {
          decode(event(m));
        } else {
          assert.throws(() => decode(event(m)), { message: `field ${JSON.stringify(prefix + p)}: missing` });
        }
      }
    });
  }

  test("a decoded state has the contract's fields only", () => {
    assert.deepEqual(decodeState(JSON.stringify({ ...state, later: 1 })), state);
    assert.deepEqual(decodeFrame(JSON.stringify({ ...watchFrame, later: 1 })), {
      election_id: room,
      status: "leader",
      leader,
      retry_after_ms: 5000,
      observed_at: "2030-01-02T03:04:00Z",
    });
  });
});
