/**
 * What must hold of a client's ledger after every step, whatever order facts,
 * closes and payments came in, read from the database as the service left it:
 *
 * 1. each fact is counted by one confirmed portion at most, and a portion's
 *    funding is the funding facts it counted;
 * 2. a stated portion is counted by a statement of its own pair and period,
 *    and a period's statements sum exactly the portions they counted; after a
 *    close run, every confirmed portion of a closed period is stated;
 * 3. each closed period's fee is the contract's rule applied to its stated
 *    result and the carry brought in (ORIGINAL plus ADJUSTMENTs);
 * 4. what the fees came to equals what was charged: obligations less
 *    reductions less credit;
 * 5. every unit a credited transfer brought is in exactly one of: paid to an
 *    obligation, or held for review; an obligation is paid once, exactly
 *    what it owed;
 * 6. a position fully closed and confirmed states exactly its facts' result.
 */
import assert from "node:assert/strict";
import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import {
  credits,
  obligationReductions,
  obligations,
  payments,
  performancePortions,
  periodCloses,
  resultFacts,
  statements,
} from "../../db/schema.ts";
import { feeMicros } from "../../domain/money.ts";

export interface LedgerExpectations {
  partnerId: string;
  clientId: number;
  policy: "CARRY" | "NO_CARRY";
  percent: string;
  /** A close run was the last step: nothing confirmed in a closed period may be left unstated. */
  justClosed: boolean;
  /** Positions fully closed, with the result their facts add up to, in micro-units. */
  closedPositions: { positionId: string; netMicros: number }[];
  /** Units each transfer brought, by its hash (whichever instruction it ends up paying). */
  received: Map<string, bigint>;
}

export async function checkLedger(db: Executor, expected: LedgerExpectations): Promise<void> {
  const { clientId } = expected;
  const portions = await db.select().from(performancePortions).where(eq(performancePortions.clientId, clientId));
  const facts = await db.select().from(resultFacts).where(eq(resultFacts.clientId, clientId));
  const stated = await db.select().from(statements).where(eq(statements.clientId, clientId));
  const closes = await db.select().from(periodCloses)
    .where(and(eq(periodCloses.partnerId, expected.partnerId), eq(periodCloses.status, "DONE")))
    .orderBy(periodCloses.periodStart);
  const confirmed = portions.filter((portion) => portion.status === "CONFIRMED");

  // 1. Each fact counted once.
  const factByRef = new Map(facts.map((fact) => [fact.venueRef, fact]));
  const refs = confirmed.flatMap((portion) => portion.factRefs);
  assert.equal(new Set(refs).size, refs.length, `a fact counted twice: ${refs.sort().join(" ")}`);
  for (const portion of confirmed) {
    const funding = portion.factRefs.map((ref) => factByRef.get(ref)!).filter((fact) => fact.kind === "FUNDING");
    const micros = funding.reduce((sum, fact) => sum + Math.round(Number(fact.funding) * 1e6), 0);
    assert.equal(portion.fundingMicros, micros, `portion ${portion.venueRef}: its funding is what it counted`);
    assert.equal(portion.factsCount, portion.factRefs.length);
  }

  // 2. Stated portions and their statements.
  const statementById = new Map(stated.map((row) => [row.statementId, row]));
  for (const portion of portions) {
    if (!portion.statementId) continue;
    const statement = statementById.get(portion.statementId);
    assert.ok(statement && portion.status === "CONFIRMED", `portion ${portion.venueRef} stated by a statement`);
    assert.ok(statement.periodStart <= portion.closedAt && portion.closedAt < statement.periodEnd);
  }
  for (const close of closes) {
    const ofPeriod = stated.filter((row) => row.periodStart === close.periodStart);
    const ids = new Set(ofPeriod.map((row) => row.statementId));
    const counted = confirmed.filter((portion) => portion.statementId && ids.has(portion.statementId));
    const sum = (rows: { netMicros: number }[]) => rows.reduce((total, row) => total + row.netMicros, 0);
    assert.equal(sum(ofPeriod), sum(counted), `period ${close.periodStart}: statements sum their portions`);
    assert.equal(
      ofPeriod.reduce((total, row) => total + row.sourceFactsCount, 0),
      counted.reduce((total, portion) => total + portion.factsCount, 0),
    );
    if (expected.justClosed) {
      const unstated = confirmed.filter((portion) =>
        !portion.statementId && close.periodStart <= portion.closedAt && portion.closedAt < close.periodEnd
      );
      assert.deepEqual(unstated.map((portion) => portion.venueRef), [], "confirmed in a closed period, unstated");
    }
  }

  // 3. Each closed period's fee by the rule, carry and adjustments included.
  let carry = 0;
  let fees = 0;
  for (const close of closes) {
    const ofPeriod = stated.filter((row) => row.periodStart === close.periodStart);
    if (!ofPeriod.length) continue;
    const net = ofPeriod.reduce((total, row) => total + row.netMicros, 0);
    const total = net + carry;
    const fee = feeMicros(Math.max(0, total), expected.percent);
    assert.equal(ofPeriod.reduce((sum, row) => sum + row.feeMicros, 0), fee, `period ${close.periodStart}: fee`);
    carry = expected.policy === "CARRY" ? Math.min(0, total) : 0;
    assert.equal(ofPeriod.reduce((sum, row) => sum + row.carryOutMicros, 0), carry, `carry out`);
    fees += fee;
  }

  // 4. What the fees came to is what was charged.
  const owed = await db.select().from(obligations).where(eq(obligations.clientId, clientId));
  const ids = owed.map((row) => row.obligationId);
  const reductions = ids.length
    ? await db.select().from(obligationReductions).where(inArray(obligationReductions.obligationId, ids))
    : [];
  const credit = await db.select().from(credits).where(eq(credits.clientId, clientId));
  const charged = owed.reduce((sum, row) => sum + row.amountMicros, 0) -
    reductions.reduce((sum, row) => sum + row.amountMicros, 0) -
    credit.reduce((sum, row) => sum + row.amountMicros, 0);
  assert.equal(charged, fees, "obligations less reductions less credit are the fees stated");

  // 5. Every unit received paid an obligation or is held for review; an obligation is paid once, exactly
  // (its instruction's tag, under a cent, rides along with the payment).
  const paid = ids.length ? await db.select().from(payments).where(inArray(payments.obligationId, ids)) : [];
  for (const obligation of owed) {
    const reduced = reductions.filter((row) => row.obligationId === obligation.obligationId)
      .reduce((sum, row) => sum + row.amountMicros, 0);
    const credited = paid.filter((payment) =>
      payment.obligationId === obligation.obligationId && payment.status === "CONFIRMED"
    );
    assert.equal(credited.length, obligation.status === "PAID" ? 1 : 0, `obligation ${obligation.obligationId}`);
    for (const payment of credited) {
      const scale = 10n ** BigInt(payment.tokenDecimals! - 6);
      const applied = (expected.received.get(payment.txHash!) ?? 0n) - BigInt(payment.overpaidTokenAmount ?? "0");
      const over = applied - BigInt(obligation.amountMicros - reduced) * scale;
      const tagBound = 10n ** BigInt(Math.min(payment.tokenDecimals! - 2, 9));
      assert.ok(over >= 0n && over < tagBound, `payment ${payment.paymentId} paid what was owed: ${over} over`);
    }
  }
  for (const payment of paid) {
    // A transfer held for review paid nothing: all of it is held. (One not credited yet, or refused as
    // underpaid or expired, is not the service's money yet: nothing of it is counted anywhere.)
    if (payment.status !== "REVIEW") continue;
    const received = expected.received.get(payment.txHash!) ?? 0n;
    const held = BigInt(payment.overpaidTokenAmount ?? "0");
    assert.equal(held, received, `payment ${payment.paymentId} (${payment.status}): all it brought is held`);
  }

  // 6. A position fully closed and confirmed states exactly its facts' result.
  for (const position of expected.closedPositions) {
    const own = portions.filter((portion) => portion.positionId === position.positionId);
    if (!own.length || own.some((portion) => portion.status !== "CONFIRMED")) continue;
    assert.equal(own.reduce((sum, portion) => sum + portion.netMicros, 0), position.netMicros, position.positionId);
  }
}
