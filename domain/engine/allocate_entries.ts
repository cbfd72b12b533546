/**
 * A signal's fan-out, between judging and sending: the accounts admitted one
 * by one are held, together, to the platform's limits, in a fair order.
 * - Aggregate caps (asset policy): the signal's entries together, the asset,
 *   one direction; an entry that would cross one is refused
 *   AGGREGATE_EXPOSURE_LIMIT, and with exposure that cannot be verified every
 *   entry is refused EXPOSURE_UNVERIFIED.
 * - The distribution limit (provider settings, maxEntriesPerSignal): eligible
 *   accounts beyond it are refused SIGNAL_DISTRIBUTION_LIMIT.
 * The order is the rotation: the accounts least recently included in a
 * signal's cohort first (never included before all), then by client, so
 * those left out of one signal go first at the next ones. An allocation cut
 * short resumes the same: entries already sent and the cohort already chosen
 * for this signal stay first.
 */
import { yieldToEventLoop } from "../concurrency.ts";
import { sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { admissions, type assetPolicies, automations } from "../../db/schema.ts";
import {
  capBroken,
  capsOf,
  type Exposure,
  exposureOn,
  formatNotional,
  notionalOf,
} from "../admission/aggregate_exposure.ts";
import { maxEntriesPerSignal } from "../catalog/provider_settings.ts";
import type { Ctx } from "../context.ts";
import type { ProviderId } from "../../venues/types.ts";
import { activeSpan, inSpan } from "../telemetry/tracing.ts";

/** Rows per write: each batch is one short transaction. */
const WRITE_BATCH = 1_000;

interface AllocatedSignal {
  signalId: string;
  sequence: number;
  providerId: ProviderId;
  symbol: string;
  side: "BUY" | "SELL";
}

type Refusal = { clientId: number; code: string; detail: string };

/** Within a span of its own (`engine.allocate`), with the cohort's and the refusals' sizes. */
export function allocateEntries(
  ctx: Ctx,
  signal: AllocatedSignal,
  policy: typeof assetPolicies.$inferSelect | null,
): Promise<void> {
  return inSpan("engine.allocate", { "signal.id": signal.signalId }, () => allocate(ctx, signal, policy));
}

async function allocate(
  ctx: Ctx,
  signal: AllocatedSignal,
  policy: typeof assetPolicies.$inferSelect | null,
): Promise<void> {
  const limit = await maxEntriesPerSignal(ctx.db.read, signal.providerId);
  const caps = capsOf(policy);
  if (limit === null && caps === null) return;
  const admitted = await ctx.db.read.values<[number, string, string, string | null, number | null]>(sql`
    SELECT ${admissions.clientId}, ${admissions.quantity}, ${admissions.price}, ${admissions.intentId},
      ${automations.lastCohortSignal}
    FROM ${admissions} JOIN ${automations} ON ${automations.clientId} = ${admissions.clientId}
      AND ${automations.providerId} = ${admissions.providerId}
    WHERE ${admissions.signalId} = ${signal.signalId} AND ${admissions.decision} = 'ADMITTED'
    ORDER BY ${admissions.intentId} IS NULL, coalesce(${automations.lastCohortSignal}, 0) = ${signal.sequence} DESC,
      coalesce(${automations.lastCohortSignal}, 0), ${admissions.clientId}`);
  const exposure: Exposure | null = caps &&
    await exposureOn(ctx.db.read, signal.providerId, signal.symbol, signal.signalId);

  const cohort: number[] = [];
  const refusals: Refusal[] = [];
  let signalTotal = 0n;
  for (const [clientId, quantity, price, intentId] of admitted) {
    const notional = notionalOf(quantity, price);
    const take = () => {
      cohort.push(clientId);
      signalTotal += notional;
      if (exposure && signal.side === "BUY") exposure.long += notional;
      else if (exposure) exposure.short += notional;
    };
    // An entry already sent is part of the cohort whatever happens now.
    if (intentId !== null) {
      take();
      continue;
    }
    if (caps && exposure?.unverified) {
      refusals.push({ clientId, code: "EXPOSURE_UNVERIFIED", detail: exposure.unverified });
      continue;
    }
    const broken = caps && capBroken(caps, exposure!, signal.side, signalTotal, notional);
    if (broken) {
      refusals.push({
        clientId,
        code: "AGGREGATE_EXPOSURE_LIMIT",
        detail: `A entrada (${formatNotional(notional)} USD) ultrapassaria ${broken}.`,
      });
      continue;
    }
    if (limit !== null && cohort.length >= limit) {
      refusals.push({
        clientId,
        code: "SIGNAL_DISTRIBUTION_LIMIT",
        detail: `Conta elegível fora do grupo deste sinal (${limit} entradas por sinal); ` +
          "tem prioridade nos próximos sinais.",
      });
      continue;
    }
    take();
  }
  activeSpan()?.setAttributes({ "allocation.cohort": cohort.length, "allocation.refused": refusals.length });
  await writeRefusals(ctx, signal.signalId, refusals);
  if (limit !== null) await markCohort(ctx, signal, cohort);
}

async function writeRefusals(ctx: Ctx, signalId: string, refusals: Refusal[]): Promise<void> {
  for (let i = 0; i < refusals.length; i += WRITE_BATCH) {
    const batch = JSON.stringify(refusals.slice(i, i + WRITE_BATCH));
    await withTransaction(
      ctx.db,
      (tx) =>
        // Materialized, the refusals drive the join (see claimEntries in dispatch_entries.ts).
        tx.run(sql`WITH refusal(client_id, code, detail) AS MATERIALIZED
            (SELECT value->>'clientId', value->>'code', value->>'detail' FROM json_each(${batch}))
          UPDATE ${admissions} SET decision = 'REFUSED', stage = 'ALLOCATION', code = refusal.code,
            detail = refusal.detail
          FROM refusal
          WHERE ${admissions.signalId} = ${signalId} AND ${admissions.clientId} = refusal.client_id
            AND ${admissions.intentId} IS NULL`),
    );
    await yieldToEventLoop();
  }
}

/** The cohort's accounts were served by this signal: later signals put them after those left out. */
async function markCohort(ctx: Ctx, signal: AllocatedSignal, cohort: number[]): Promise<void> {
  for (let i = 0; i < cohort.length; i += WRITE_BATCH) {
    const batch = JSON.stringify(cohort.slice(i, i + WRITE_BATCH));
    await withTransaction(ctx.db, (tx) =>
      tx.run(sql`UPDATE ${automations} SET last_cohort_signal = ${signal.sequence}
        WHERE ${automations.providerId} = ${signal.providerId}
          AND ${automations.clientId} IN (SELECT value FROM json_each(${batch}))`));
    await yieldToEventLoop();
  }
}
