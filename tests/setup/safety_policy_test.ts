/** The safety policy's pure verdicts: which changes of an acknowledged setup carry its acknowledgement over. */
import assert from "node:assert/strict";
import { carriesOver, evaluateSafety } from "../../domain/setups/safety_policy.ts";
import { SETUP_DEFAULTS, type SetupValues } from "../../domain/setups/setup_values.ts";

/** Flags HIGH_LEVERAGE_LARGE_MARGIN_SHARE, NO_AUTO_STOP_LOSS and WIDE_ADVERSE_ENTRY. */
const ACKNOWLEDGED: SetupValues = {
  ...SETUP_DEFAULTS,
  leverage: 10,
  maxMarginPerTradeMicros: 500_000_000,
  maxDailyLossMicros: 50_000_000,
  capitalBaseMicros: 600_000_000,
  maxLossPerTradeMicros: 20_000_000,
  entryTimeoutMinutes: 30,
  autoStopLoss: false,
  maxAdverseEntryPercent: "2",
};
const stored = {
  values: ACKNOWLEDGED,
  fingerprint: evaluateSafety("VENUE_A", ACKNOWLEDGED, null).fingerprint,
};

Deno.test("safety policy: every value moved in its safe direction carries the acknowledgement over", () => {
  for (
    const safer of [
      { leverage: 9 },
      { maxMarginPerTradeMicros: 80_000_000, maxDailyLossMicros: 30_000_000 },
      { maxMarginPerTradeMicros: 0, maxDailyLossMicros: 0 },
      { maxLossPerTradeMicros: 10_000_000 },
      { autoStopLoss: true },
      { maxAdverseEntryPercent: "1.5" },
      // Values the rules do not read change nothing.
      { orderSizeMicros: 900_000_000, allowedSymbols: ["BTCUSDT"], maxConcurrentTrades: 3 },
    ] satisfies Partial<SetupValues>[]
  ) {
    const values = { ...ACKNOWLEDGED, ...safer };
    assert.equal(carriesOver("VENUE_A", stored, values), true, JSON.stringify(safer));
    assert.equal(evaluateSafety("VENUE_A", values, stored).acknowledged, true, JSON.stringify(safer));
  }
});

Deno.test("safety policy: a raise, a mixed change, a new flag or an unclassified change needs a new acknowledgement", () => {
  for (
    const change of [
      { maxMarginPerTradeMicros: 500_000_001 },
      { maxDailyLossMicros: 60_000_000 },
      { maxMarginPerTradeMicros: 80_000_000, maxDailyLossMicros: 60_000_000 },
      { leverage: 9, maxAdverseEntryPercent: "2.5" },
      { maxMarginPerTradeMicros: 80_000_000, allowMemecoins: true },
      // capitalBase is the base the shares are measured against, not a limit: no direction is safer.
      { capitalBaseMicros: 6_000_000_000 },
      { capitalBaseMicros: 300_000_000 },
      // A limit removed, or one where there was none, is not classified as safer.
      { maxLossPerTradeMicros: null },
    ] satisfies Partial<SetupValues>[]
  ) {
    const values = { ...ACKNOWLEDGED, ...change };
    assert.equal(carriesOver("VENUE_A", stored, values), false, JSON.stringify(change));
    assert.equal(evaluateSafety("VENUE_A", values, stored).acknowledged, false, JSON.stringify(change));
  }
  const noLossLimit = { ...ACKNOWLEDGED, maxLossPerTradeMicros: null };
  const fromNone = { values: noLossLimit, fingerprint: evaluateSafety("VENUE_A", noLossLimit, null).fingerprint };
  assert.equal(carriesOver("VENUE_A", fromNone, { ...noLossLimit, maxLossPerTradeMicros: 1 }), false);
});

Deno.test("safety policy: only an acknowledgement of the stored values themselves carries over", () => {
  const lowered = { ...ACKNOWLEDGED, maxMarginPerTradeMicros: 80_000_000 };
  // Never acknowledged, acknowledged under another policy version or for another combination, or at another provider.
  for (const fingerprint of [null, "0".repeat(64), evaluateSafety("VENUE_A", lowered, null).fingerprint]) {
    assert.equal(carriesOver("VENUE_A", { values: ACKNOWLEDGED, fingerprint }, lowered), false, String(fingerprint));
  }
  assert.equal(carriesOver("VENUE_B", stored, lowered), false);
  // The exact combination stays acknowledged as before; a setup without flags needs nothing.
  assert.equal(evaluateSafety("VENUE_A", ACKNOWLEDGED, stored).acknowledged, true);
  const quiet = { ...ACKNOWLEDGED, leverage: 5, autoStopLoss: true, maxAdverseEntryPercent: "0.5" };
  assert.deepEqual(evaluateSafety("VENUE_A", quiet, stored).flags, []);
  assert.equal(evaluateSafety("VENUE_A", quiet, stored).required, false);
});
