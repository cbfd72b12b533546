import assert from "node:assert/strict";
import { iso } from "../../domain/clock.ts";

Deno.test("iso() formats every instant exactly like Date.prototype.toISOString", () => {
  const edges = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, Date.parse("2026-11-02T10:00:00.000Z")];
  const leapAndBoundaries = ["2024-02-29T23:59:59.999Z", "2000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]
    .map(Date.parse);
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const samples = [...edges, ...leapAndBoundaries];
  for (let i = 0; i < 200_000; i++) samples.push(Math.floor(random() * 253_402_300_799_999));
  // Runs of nearby instants exercise the cached day prefix across midnight.
  for (let ms = Date.parse("2026-11-02T23:59:59.000Z"); ms < Date.parse("2026-11-03T00:00:01.000Z"); ms += 7) {
    samples.push(ms);
  }
  for (const ms of samples) assert.equal(iso(ms), new Date(ms).toISOString(), `at ${ms}`);
  // Outside four-digit years and for non-integers it defers to Date itself.
  for (const ms of [-1, -86_400_001, 253_402_300_800_000, 1.5]) assert.equal(iso(ms), new Date(ms).toISOString());
});
