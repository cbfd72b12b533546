import assert from "node:assert/strict";
import { isUsdAmount, microsToUsd, usdToMicros } from "../../domain/money.ts";
import { formatDec, parseDec } from "../../venues/decimal.ts";

Deno.test("a JSON number becomes the decimal its shortest form spells, exponents included", () => {
  const cases: [number, string][] = [
    [1e-7, "0.0000001"],
    [-2.5e-8, "-0.000000025"],
    [1.5e21, "1500000000000000000000"],
    [49.9999999999999, "49.9999999999999"],
    [0.1, "0.1"],
    [-0, "0"],
  ];
  for (const [number, text] of cases) assert.equal(formatDec(parseDec(number)), text, String(number));
  assert.throws(() => parseDec(Number.NaN), RangeError);
  assert.throws(() => parseDec(Number.POSITIVE_INFINITY), RangeError);
});

Deno.test("USD amounts are exact to 6 decimals and within micro-unit range, or refused", () => {
  assert.equal(usdToMicros(1.123456), 1_123_456);
  assert.equal(usdToMicros("0.000001"), 1);
  assert.equal(microsToUsd(usdToMicros(49.9)), 49.9);
  for (
    const refused of [49.9999999999999, 1e-7, 1e-13, 100.0000000000001, 1e300, 5e-324, -1, Number.NaN, "1e3", "abc"]
  ) {
    assert.equal(isUsdAmount(refused), false, String(refused));
  }
  for (const accepted of [0, 1e-6, 1.123456, 9_000_000_000, "12.5"]) assert.equal(isUsdAmount(accepted), true);
});
