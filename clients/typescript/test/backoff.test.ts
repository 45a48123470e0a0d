// The back-off's bounds and growth, with a fixed jitter.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff } from "../src/backoff.js";

test("back-off grows from min·2 to max, spreads by the jitter, and resets", () => {
  const top = new Backoff(100, 1000, () => 0.999999);
  const ceilings = Array.from({ length: 6 }, () => Math.round(top.next()));
  assert.deepEqual(ceilings, [200, 400, 800, 1000, 1000, 1000]);
  const bottom = new Backoff(100, 1000, () => 0);
  for (let i = 0; i < 5; i++) assert.equal(bottom.next(), 100);
  top.reset();
  assert.equal(Math.round(top.next()), 200);
  const broken = new Backoff(100, 1000, () => 7);
  assert.equal(broken.next(), 100, "a jitter outside [0, 1) counts as 0");
  const half = new Backoff(100, 1000, () => 0.5);
  assert.equal(half.next(), 150);
});
