import assert from "node:assert/strict";
import { constantTimeEqual, newId } from "../../domain/ids.ts";

Deno.test("constantTimeEqual tells equal strings from any difference, length included", () => {
  assert.equal(constantTimeEqual("", ""), true);
  assert.equal(constantTimeEqual("csk_abc", "csk_abc"), true);
  assert.equal(constantTimeEqual("csk_abc", "csk_abd"), false);
  assert.equal(constantTimeEqual("csk_abc", "csk_ab"), false);
  assert.equal(constantTimeEqual("csk_ab", "csk_abc"), false);
  assert.equal(constantTimeEqual("a", "\u0000a"), false);
  assert.equal(constantTimeEqual("\u00e9", "e\u0301"), false);
  assert.equal(constantTimeEqual("😀", "😀"), true);
});

Deno.test("ids of one millisecond increase, whatever their prefix; another millisecond starts afresh", () => {
  const at = Date.UTC(2026, 10, 27, 1, 2, 3, 456);
  const ids = Array.from({ length: 5_000 }, (_, i) => newId(i % 2 ? "stm" : "evt", at));
  const bodies = ids.map((id) => id.slice(4));
  for (let i = 1; i < bodies.length; i++) assert.ok(bodies[i] > bodies[i - 1], `${bodies[i - 1]} then ${bodies[i]}`);
  assert.equal(new Set(bodies).size, bodies.length);
  assert.ok(bodies.every((body) => /^[0-9a-hjkmnp-tv-z]{26}$/.test(body) && body.startsWith(bodies[0].slice(0, 10))));
  const later = newId("stm", at + 1).slice(4);
  assert.ok(later.slice(0, 10) > bodies[0].slice(0, 10));
});
