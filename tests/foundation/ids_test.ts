import assert from "node:assert/strict";
import { constantTimeEqual } from "../../domain/ids.ts";

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
