/**
 * The entry gates as a table: every blocking case alone, every pair and
 * triple (the first failing gate, in the spec's order, wins), candidate
 * entries, and maintenance passing with everything blocked.
 */
import assert from "node:assert/strict";
import {
  type EntryCandidate,
  evaluateEntry,
  type GateAction,
  type GateSnapshot,
  insideWindow,
} from "../../domain/gates/entry_gates.ts";

const NOON = Date.parse("2026-11-23T12:00:00.000Z");

/** A snapshot every gate allows: VENUE_B-like, with a builder fee approved. */
function allowedSnapshot(): GateSnapshot {
  return {
    now: NOON,
    partnerActive: true,
    contractSuspended: false,
    clientActive: true,
    provider: { inContract: true, inEffectiveGrant: true },
    automation: {
      enabled: true,
      risk: { leverage: 5, maxMarginPerTradeMicros: 100e6, maxConcurrentTrades: 1, maxDailyLossMicros: 50e6 },
      conditions: {
        symbols: ["BTCUSDC", "ETHUSDC"],
        tradingWindowUtc: { from: "08:00", to: "20:00" },
        minConfidence: 60,
      },
      strategy: {
        strategyId: "trend-follow",
        published: true,
        inPartnerGrant: true,
        selectedByClient: true,
        supportsProvider: true,
        markets: ["BTCUSDC", "ETHUSDC", "DOGEUSDC"],
      },
    },
    setup: {
      enabled: true,
      missing: [],
      leverage: 5,
      maxMarginPerTradeMicros: 100e6,
      maxConcurrentTrades: 1,
      maxDailyLossMicros: 50e6,
      allowedSymbols: [],
      allowMemecoins: false,
    },
    envelope: { maxLeverage: 10, maxMarginPerTradeMicros: 500e6, maxConcurrentTrades: 3, maxDailyLossMicros: 200e6 },
    dailyLossHalted: false,
    assetPolicies: new Map([["BTCUSDC", { memecoin: false }], ["ETHUSDC", { memecoin: false }]]),
    commercial: { allowed: true, reasonCode: "B2B_CONTRACT_ACTIVE" },
    readiness: {
      realExecution: "ENABLED",
      connection: "CONNECTED",
      accountProblems: [],
      venueReachable: true,
      reconciliationPending: false,
      protectionUnconfirmed: false,
      externalExposure: false,
      slotsUsed: 0,
    },
    builder: {
      beneficiary: "0x" + "b0".repeat(20),
      feeTenthsBps: 25,
      ceilingTenthsBps: 100,
      approvedMaxFeeTenthsBps: 25,
      beneficiaryAccruesFees: true,
    },
  };
}

interface Case {
  name: string;
  gate: number;
  reason: string;
  block: (s: GateSnapshot) => void;
}

/**
 * Every way an entry is blocked, in evaluation order (gate, then order within
 * the gate). Cases are applied last-to-first, so when two touch the same field
 * the earlier one, the expected winner, is what remains.
 */
const CASES: Case[] = [
  { name: "partner suspended", gate: 1, reason: "B2B_ACCESS_SUSPENDED", block: (s) => s.partnerActive = false },
  { name: "contract suspended", gate: 1, reason: "B2B_ACCESS_SUSPENDED", block: (s) => s.contractSuspended = true },
  { name: "client suspended", gate: 1, reason: "CLIENT_SUSPENDED", block: (s) => s.clientActive = false },
  {
    name: "provider outside contract",
    gate: 2,
    reason: "PROVIDER_NOT_ALLOWED",
    block: (s) => s.provider.inContract = false,
  },
  {
    name: "provider restricted by partner",
    gate: 2,
    reason: "PROVIDER_NOT_GRANTED",
    block: (s) => s.provider.inEffectiveGrant = false,
  },
  { name: "no automation", gate: 2, reason: "AUTOMATION_OFF", block: (s) => s.automation = null },
  {
    name: "automation paused",
    gate: 2,
    reason: "AUTOMATION_OFF",
    block: (s) => s.automation && (s.automation.enabled = false),
  },
  {
    name: "strategy unpublished",
    gate: 2,
    reason: "STRATEGY_NOT_AVAILABLE",
    block: (s) => s.automation && (s.automation.strategy.published = false),
  },
  {
    name: "strategy outside partner grant",
    gate: 2,
    reason: "STRATEGY_NOT_GRANTED",
    block: (s) => s.automation && (s.automation.strategy.inPartnerGrant = false),
  },
  {
    name: "strategy does not trade here",
    gate: 2,
    reason: "STRATEGY_NOT_GRANTED",
    block: (s) => s.automation && (s.automation.strategy.supportsProvider = false),
  },
  {
    name: "strategy not selected by client",
    gate: 3,
    reason: "STRATEGY_NOT_GRANTED",
    block: (s) => s.automation && (s.automation.strategy.selectedByClient = false),
  },
  { name: "no setup", gate: 4, reason: "SETUP_DISABLED", block: (s) => s.setup = null },
  { name: "asset policies unreadable", gate: 4, reason: "READINESS_UNKNOWN", block: (s) => s.assetPolicies = null },
  {
    name: "outside the trading window",
    gate: 4,
    reason: "OUTSIDE_TRADING_WINDOW",
    block: (s) => s.automation && (s.automation.conditions.tradingWindowUtc = { from: "13:00", to: "14:00" }),
  },
  {
    name: "only a memecoin has a policy",
    gate: 4,
    reason: "ASSET_POLICY_REQUIRED",
    block: (s) => s.assetPolicies && (s.assetPolicies = new Map([["DOGEUSDC", { memecoin: true }]])),
  },
  {
    name: "automation symbols have no policy",
    gate: 4,
    reason: "ASSET_POLICY_REQUIRED",
    block: (s) => s.automation && (s.automation.conditions.symbols = ["SOLUSDC"]),
  },
  {
    name: "setup leverage above envelope",
    gate: 5,
    reason: "OUTSIDE_ENVELOPE",
    block: (s) => s.setup && (s.setup.leverage = 11),
  },
  {
    name: "automation daily loss above envelope",
    gate: 5,
    reason: "OUTSIDE_ENVELOPE",
    block: (s) => s.automation && (s.automation.risk.maxDailyLossMicros = 200e6 + 1),
  },
  { name: "setup disabled", gate: 6, reason: "SETUP_DISABLED", block: (s) => s.setup && (s.setup.enabled = false) },
  {
    name: "setup incomplete",
    gate: 6,
    reason: "SETUP_INCOMPLETE",
    block: (s) => s.setup && (s.setup.missing = ["capitalBase"]),
  },
  { name: "daily result unreadable", gate: 6, reason: "READINESS_UNKNOWN", block: (s) => s.dailyLossHalted = null },
  { name: "daily loss halt", gate: 6, reason: "DAILY_RISK_EXHAUSTED", block: (s) => s.dailyLossHalted = true },
  { name: "commercial unreadable", gate: 7, reason: "READINESS_UNKNOWN", block: (s) => s.commercial = null },
  {
    name: "obligation overdue",
    gate: 7,
    reason: "OBLIGATION_OVERDUE",
    block: (s) => s.commercial && (s.commercial = { allowed: false, reasonCode: "OBLIGATION_OVERDUE" }),
  },
  {
    name: "real execution not validated",
    gate: 8,
    reason: "REAL_EXECUTION_NOT_VALIDATED",
    block: (s) => s.readiness.realExecution = "NOT_VALIDATED",
  },
  {
    name: "access lost",
    gate: 8,
    reason: "PROVIDER_ACCESS_LOST",
    block: (s) => s.readiness.connection = "ACCESS_LOST",
  },
  { name: "not connected", gate: 8, reason: "API_NOT_CONFIGURED", block: (s) => s.readiness.connection = "REVOKED" },
  {
    name: "hedge mode on the account",
    gate: 8,
    reason: "ACCOUNT_SETTINGS_INVALID",
    block: (s) => s.readiness.accountProblems = ["HEDGE_MODE_ENABLED"],
  },
  {
    name: "venue unreachable",
    gate: 8,
    reason: "ENTRY_CIRCUIT_OPEN",
    block: (s) => s.readiness.venueReachable = false,
  },
  {
    name: "reconciliation pending",
    gate: 8,
    reason: "ENTRY_CIRCUIT_OPEN",
    block: (s) => s.readiness.reconciliationPending = true,
  },
  {
    name: "a position without confirmed protection",
    gate: 8,
    reason: "ENTRY_CIRCUIT_OPEN",
    block: (s) => s.readiness.protectionUnconfirmed = true,
  },
  {
    name: "a position held outside the platform",
    gate: 8,
    reason: "ENTRY_CIRCUIT_OPEN",
    block: (s) => s.readiness.externalExposure = true,
  },
  { name: "positions unreadable", gate: 8, reason: "READINESS_UNKNOWN", block: (s) => s.readiness.slotsUsed = null },
  {
    name: "a position is open",
    gate: 8,
    reason: "POSITION_COUNT_CAP",
    block: (s) => s.readiness.slotsUsed !== null && (s.readiness.slotsUsed = 1),
  },
  {
    name: "no builder beneficiary",
    gate: 9,
    reason: "BUILDER_CONFIG_REQUIRED",
    block: (s) => s.builder && (s.builder.beneficiary = null),
  },
  {
    name: "zero-address beneficiary",
    gate: 9,
    reason: "BUILDER_CONFIG_INVALID",
    block: (s) => s.builder?.beneficiary && (s.builder.beneficiary = "0x" + "0".repeat(40)),
  },
  {
    name: "builder fee above ceiling",
    gate: 9,
    reason: "BUILDER_FEE_INVALID",
    block: (s) => s.builder && (s.builder.feeTenthsBps = 101),
  },
  {
    name: "builder outside standard mode at the venue",
    gate: 9,
    reason: "BUILDER_CONFIG_INVALID",
    block: (s) => s.builder && (s.builder.beneficiaryAccruesFees = false),
  },
  {
    name: "builder mode unknown",
    gate: 9,
    reason: "READINESS_UNKNOWN",
    block: (s) => s.builder && (s.builder.beneficiaryAccruesFees = null),
  },
  {
    name: "builder approval unknown",
    gate: 9,
    reason: "READINESS_UNKNOWN",
    block: (s) => s.builder && (s.builder.approvedMaxFeeTenthsBps = null),
  },
  {
    name: "builder approval below fee",
    gate: 9,
    reason: "BUILDER_APPROVAL_REQUIRED",
    block: (s) => s.builder?.approvedMaxFeeTenthsBps && (s.builder.approvedMaxFeeTenthsBps = 10),
  },
];

function snapshotWith(cases: Case[]): GateSnapshot {
  const snapshot = allowedSnapshot();
  for (const entry of [...cases].reverse()) entry.block(snapshot);
  return snapshot;
}

function decide(cases: Case[], action: GateAction = "OPEN", candidate?: EntryCandidate) {
  return evaluateEntry(snapshotWith(cases), action, candidate);
}

Deno.test("gates: the allowed snapshot opens, with and without a candidate", () => {
  assert.deepEqual(decide([]), { newEntries: "ALLOWED", blockReason: null, blockDetail: null });
  assert.deepEqual(decide([], "OPEN", { symbol: "BTCUSDC", confidence: 75 }).newEntries, "ALLOWED");
});

Deno.test("gates: every blocking case alone gives its reason, gate and a detail", () => {
  for (const entry of CASES) {
    const decision = decide([entry]);
    if (decision.newEntries !== "BLOCKED") throw new Error(`${entry.name}: expected BLOCKED`);
    assert.deepEqual([decision.gate, decision.blockReason], [entry.gate, entry.reason], entry.name);
    assert.ok(decision.blockDetail.length > 10, `${entry.name}: a detail for the partner`);
  }
});

Deno.test("gates: in every pair and triple the first failing gate wins", () => {
  let combinations = 0;
  for (let i = 0; i < CASES.length; i++) {
    for (let j = i + 1; j < CASES.length; j++) {
      const pair = decide([CASES[i], CASES[j]]);
      assert.deepEqual(pair.blockReason, CASES[i].reason, `${CASES[i].name} + ${CASES[j].name}`);
      for (let k = j + 1; k < CASES.length; k++) {
        const triple = decide([CASES[i], CASES[j], CASES[k]]);
        assert.deepEqual(triple.blockReason, CASES[i].reason, `${CASES[i].name} + ${CASES[j].name} + ${CASES[k].name}`);
        combinations++;
      }
    }
  }
  assert.ok(combinations > 5000);
});

Deno.test("gates: closing, reducing, protecting and reconciling pass with everything blocked", () => {
  const everything = CASES;
  assert.deepEqual(decide(everything).blockReason, "B2B_ACCESS_SUSPENDED");
  for (const action of ["CLOSE", "REDUCE", "PROTECT", "RECONCILE"] as const) {
    assert.deepEqual(decide(everything, action).newEntries, "ALLOWED", action);
    for (const entry of CASES) {
      assert.deepEqual(decide([entry], action).newEntries, "ALLOWED", `${action}: ${entry.name}`);
    }
  }
});

Deno.test("gates: a candidate entry must be an allowed asset with a policy and enough confidence", () => {
  const blockedFor = (candidate: EntryCandidate, change?: (s: GateSnapshot) => void) => {
    const snapshot = allowedSnapshot();
    change?.(snapshot);
    const decision = evaluateEntry(snapshot, "OPEN", candidate);
    return decision.newEntries === "BLOCKED" ? decision.blockReason : "ALLOWED";
  };
  assert.deepEqual(
    blockedFor({ symbol: "SOLUSDC", confidence: 90 }),
    "ASSET_NOT_ALLOWED",
    "outside automation symbols",
  );
  assert.deepEqual(
    blockedFor({ symbol: "ETHUSDC", confidence: 90 }, (s) => s.setup!.allowedSymbols = ["BTCUSDC"]),
    "ASSET_NOT_ALLOWED",
    "outside the setup's allowedSymbols",
  );
  assert.deepEqual(
    blockedFor({ symbol: "DOGEUSDC", confidence: 90 }, (s) => {
      s.automation!.conditions.symbols = undefined;
      s.assetPolicies = new Map([["DOGEUSDC", { memecoin: true }]]);
    }),
    "ASSET_NOT_ALLOWED",
    "a memecoin without allowMemecoins",
  );
  assert.deepEqual(
    blockedFor({ symbol: "DOGEUSDC", confidence: 90 }, (s) => {
      s.automation!.conditions.symbols = undefined;
      s.setup!.allowMemecoins = true;
      s.assetPolicies = new Map([["DOGEUSDC", { memecoin: true }]]);
    }),
    "ALLOWED",
    "a memecoin the setup allows",
  );
  assert.deepEqual(
    blockedFor(
      { symbol: "ETHUSDC", confidence: 90 },
      (s) => s.assetPolicies = new Map([["BTCUSDC", { memecoin: false }]]),
    ),
    "ASSET_POLICY_REQUIRED",
  );
  assert.deepEqual(blockedFor({ symbol: "BTCUSDC", confidence: 59 }), "BELOW_MIN_CONFIDENCE");
  assert.deepEqual(blockedFor({ symbol: "BTCUSDC" }), "BELOW_MIN_CONFIDENCE", "no confidence counts as 0");
  assert.deepEqual(blockedFor({ symbol: "BTCUSDC", confidence: 60 }), "ALLOWED");
  assert.deepEqual(
    blockedFor({ symbol: "BTCUSDC", confidence: 90 }, (s) => s.setup!.enabled = false),
    "SETUP_DISABLED",
    "later gates still apply to a candidate",
  );
});

Deno.test("gates: a manual order answers to no automation, but to every other gate", () => {
  const automationOnly = new Set([
    "no automation",
    "automation paused",
    "strategy unpublished",
    "strategy outside partner grant",
    "strategy does not trade here",
    "strategy not selected by client",
    "outside the trading window",
    "automation symbols have no policy",
    "automation daily loss above envelope",
  ]);
  for (const entry of CASES) {
    const decision = evaluateEntry(snapshotWith([entry]), "OPEN", { symbol: "BTCUSDC" }, "MANUAL");
    if (automationOnly.has(entry.name)) assert.equal(decision.newEntries, "ALLOWED", entry.name);
    else assert.equal(decision.blockReason, entry.reason, entry.name);
  }
  const noConfidence = evaluateEntry(allowedSnapshot(), "OPEN", { symbol: "BTCUSDC" }, "MANUAL");
  assert.equal(noConfidence.newEntries, "ALLOWED", "minConfidence is the automation's");
});

Deno.test("gates: a zero builder fee needs no approval; a venue without builder skips gate 9", () => {
  const zeroFee = allowedSnapshot();
  zeroFee.builder!.feeTenthsBps = 0;
  zeroFee.builder!.approvedMaxFeeTenthsBps = null;
  // No fee is lost to a builder outside standard mode when the opening pays none.
  zeroFee.builder!.beneficiaryAccruesFees = false;
  assert.deepEqual(evaluateEntry(zeroFee, "OPEN").newEntries, "ALLOWED");
  const noBuilder = allowedSnapshot();
  noBuilder.builder = null;
  assert.deepEqual(evaluateEntry(noBuilder, "OPEN").newEntries, "ALLOWED");
});

Deno.test("gates: trading windows are UTC, end-exclusive, and may wrap past midnight", () => {
  const at = (hhmm: string) => Date.parse(`2026-11-23T${hhmm}:00.000Z`);
  assert.ok(insideWindow(at("08:00"), { from: "08:00", to: "20:00" }));
  assert.ok(!insideWindow(at("20:00"), { from: "08:00", to: "20:00" }));
  assert.ok(insideWindow(at("23:30"), { from: "22:00", to: "02:00" }));
  assert.ok(insideWindow(at("01:59"), { from: "22:00", to: "02:00" }));
  assert.ok(!insideWindow(at("02:00"), { from: "22:00", to: "02:00" }));
});
