/** Entry-moment admission as a table: each refusal from a real condition of policy, book or order, in order. */
import assert from "node:assert/strict";
import {
  admitEntry,
  type BookReading,
  type EntryOrder,
  type EntryPolicy,
} from "../../domain/admission/entry_admission.ts";

const NOW = 1_800_000_000_000;

const policy = (): EntryPolicy => ({
  minNotionalMicros: 10e6,
  maxNotionalMicros: 20_000e6,
  maxSpreadBps: 20,
  maxSlippageBps: 30,
  maxBookFraction: "0.1",
});

/** BTC around 65,000: 1 BTC on each of three levels per side, 1 dollar apart. */
const reading = (): BookReading => ({
  book: {
    symbol: "BTCUSDT",
    bids: [{ price: "64999", quantity: "1" }, { price: "64998", quantity: "1" }, { price: "64997", quantity: "1" }],
    asks: [{ price: "65001", quantity: "1" }, { price: "65002", quantity: "1" }, { price: "65003", quantity: "1" }],
    time: NOW - 100,
  },
  readAtWall: NOW - 50,
});

const order = (): EntryOrder => ({ side: "BUY", quantity: "0.01", price: "65001" });

interface Case {
  name: string;
  code: string;
  change: (inputs: { policy: EntryPolicy | null; reading: BookReading | null; order: EntryOrder }) => void;
}

const CASES: Case[] = [
  { name: "no policy", code: "ASSET_POLICY_REQUIRED", change: (i) => i.policy = null },
  { name: "notional below the minimum", code: "ASSET_NOTIONAL_LIMIT", change: (i) => i.order.quantity = "0.0001" },
  { name: "notional above the maximum", code: "ASSET_NOTIONAL_LIMIT", change: (i) => i.order.quantity = "0.31" },
  { name: "no book", code: "BOOK_UNVERIFIED", change: (i) => i.reading = null },
  { name: "book read too long ago", code: "BOOK_UNVERIFIED", change: (i) => i.reading!.readAtWall = NOW - 2_500 },
  { name: "venue snapshot stale", code: "BOOK_UNVERIFIED", change: (i) => i.reading!.book.time = NOW - 10_000 },
  { name: "empty ask side", code: "BOOK_UNVERIFIED", change: (i) => i.reading!.book.asks = [] },
  {
    name: "crossed book",
    code: "BOOK_UNVERIFIED",
    change: (i) => i.reading!.book.bids[0] = { price: "65001", quantity: "1" },
  },
  {
    name: "unsorted levels",
    code: "BOOK_UNVERIFIED",
    change: (i) => i.reading!.book.asks[2] = { price: "65001.5", quantity: "1" },
  },
  {
    name: "wide spread",
    code: "SPREAD_LIMIT",
    change: (i) => {
      i.reading!.book.bids = [{ price: "64800", quantity: "1" }];
    },
  },
  { name: "too much of the visible book", code: "LIQUIDITY_LIMIT", change: (i) => i.order.quantity = "0.301" },
  {
    name: "thin top of book",
    code: "SLIPPAGE_LIMIT",
    change: (i) => {
      i.reading!.book.asks = [{ price: "65001", quantity: "0.001" }, { price: "65500", quantity: "2.999" }];
    },
  },
];

function decide(cases: Case[]) {
  const inputs = { policy: policy() as EntryPolicy | null, reading: reading() as BookReading | null, order: order() };
  for (const entry of [...cases].reverse()) entry.change(inputs);
  return admitEntry(inputs.policy, inputs.reading, inputs.order, NOW);
}

Deno.test("admission: a fresh, tight, deep book admits, with the estimated slippage", () => {
  const decision = decide([]);
  assert.deepEqual(decision, { admitted: true, estimatedSlippageBps: "0", notionalUsd: "650.01" });
  const deeper = admitEntry(policy(), reading(), { side: "SELL", quantity: "0.3", price: "64999" }, NOW);
  assert.equal(deeper.admitted, true);
});

Deno.test("admission: each refusal alone, with a detail", () => {
  for (const entry of CASES) {
    const decision = decide([entry]);
    if (decision.admitted) throw new Error(`${entry.name}: admitted`);
    assert.equal(decision.code, entry.code, entry.name);
    assert.ok(decision.detail.length > 10);
  }
});

Deno.test("admission: in every pair the earlier check refuses", () => {
  for (let i = 0; i < CASES.length; i++) {
    for (let j = i + 1; j < CASES.length; j++) {
      const decision = decide([CASES[i], CASES[j]]);
      assert.equal(
        decision.admitted ? "ADMITTED" : decision.code,
        CASES[i].code,
        `${CASES[i].name} + ${CASES[j].name}`,
      );
    }
  }
});
