/**
 * The billing cycle (job `billing-cycle`; spec, Commercial and billing
 * cycle). Each month the contract's per-client subscription becomes an
 * obligation for every active client with an account at a subscription
 * provider. Then every client and provider whose billing standing changed is
 * announced once: an obligation past due puts it in GRACE
 * (`commercial.grace`, entries still allowed), past its grace SUSPENDED
 * (`commercial.suspended`, new entries denied, maintenance goes on), and
 * nothing due any more makes it ACTIVE again (`commercial.reactivated`).
 * The last state announced is kept per pair, so a run repeats nothing.
 */
import { and, eq, gt, inArray, notExists, sql } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { clients, commercialNotices, obligations, partners, providerAccounts } from "../../db/schema.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { emitEvent, type EventType } from "../events/emit_event.ts";
import { loadContractVersions, pickContractInForce } from "../partners/load_partner.ts";
import { contractStart } from "./periods.ts";
import { billingStandingOf } from "./billing_standing.ts";
import { createObligation } from "./fee_obligations.ts";

const PAGE = 500;

interface Pair {
  clientId: number;
  providerId: string;
}
/** Connections that hold an account at the provider: a subscription is charged for them. */
const SUBSCRIBED_CONNECTIONS = ["CONNECTED", "ACCESS_LOST", "RECOVERING"];
export const SUBSCRIPTION_SOURCE = "MONTHLY_SUBSCRIPTION";

export interface BillingCycleSummary {
  subscriptions: number;
  grace: number;
  suspended: number;
  reactivated: number;
}

export async function runBillingCycle(ctx: Ctx): Promise<BillingCycleSummary> {
  const summary: BillingCycleSummary = { subscriptions: 0, grace: 0, suspended: 0, reactivated: 0 };
  summary.subscriptions = await chargeSubscriptions(ctx);
  for (let cursor: Pair = { clientId: 0, providerId: "" };;) {
    const page = await pairsToAnnounce(ctx, cursor);
    if (!page.length) break;
    const now = ctx.clock.now();
    for (const pair of page) {
      const announced = await withTransaction(ctx.db, (tx) => announceStanding(tx, pair, now));
      if (announced === "commercial.grace") summary.grace++;
      if (announced === "commercial.suspended") summary.suspended++;
      if (announced === "commercial.reactivated") summary.reactivated++;
    }
    cursor = page[page.length - 1];
    await yieldToEventLoop();
  }
  return summary;
}

/** The month containing `at` as its reference (`2026-11`) and its start. */
function monthOf(at: number): { reference: string; start: number } {
  const day = new Date(at);
  const start = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
  return { reference: new Date(start).toISOString().slice(0, 7), start };
}

/** This month's subscription obligations not yet written, partner by partner, a page of clients at a time. */
async function chargeSubscriptions(ctx: Ctx): Promise<number> {
  let charged = 0;
  const now = ctx.clock.now();
  const month = monthOf(now);
  for (const partner of await ctx.db.read.select().from(partners).where(eq(partners.status, "ACTIVE"))) {
    const versions = await loadContractVersions(ctx.db.read, partner.partnerId);
    if (!versions.length || contractStart(versions) > now) continue;
    const contract = pickContractInForce(versions, Math.max(month.start, contractStart(versions)));
    if (contract.suspended || contract.subscriptionMonthlyMicros <= 0) continue;
    for (const providerId of contract.subscriptionProviders) {
      for (let after = 0;;) {
        const page = await ctx.db.read.select({
          id: clients.id,
          tenantId: clients.tenantId,
          externalUserId: clients.externalUserId,
        }).from(clients)
          .innerJoin(
            providerAccounts,
            and(
              eq(providerAccounts.clientId, clients.id),
              eq(providerAccounts.providerId, providerId),
              inArray(providerAccounts.connection, SUBSCRIBED_CONNECTIONS),
            ),
          )
          .where(and(
            eq(clients.partnerId, partner.partnerId),
            eq(clients.status, "ACTIVE"),
            gt(clients.id, after),
            notExists(
              ctx.db.read.select({ one: sql`1` }).from(obligations).where(and(
                eq(obligations.clientId, clients.id),
                eq(obligations.providerId, providerId),
                eq(obligations.source, SUBSCRIPTION_SOURCE),
                eq(obligations.reference, month.reference),
              )),
            ),
          ))
          .orderBy(clients.id).limit(PAGE);
        if (!page.length) break;
        await withTransaction(ctx.db, async (tx) => {
          for (const client of page) {
            const parties = { partnerId: partner.partnerId, ...client };
            const made = await createObligation(tx, parties, {
              clientId: client.id,
              providerId,
              source: SUBSCRIPTION_SOURCE,
              reference: month.reference,
              amountMicros: contract.subscriptionMonthlyMicros,
              dueFrom: Math.max(month.start, now),
              dueDays: contract.dueDays,
              statementId: null,
            }, now);
            if (made) charged++;
          }
        });
        after = page[page.length - 1].id;
        await yieldToEventLoop();
      }
    }
  }
  return charged;
}

/** Pairs whose announced state may be stale (something due, or announced as not ACTIVE), after `cursor`. */
async function pairsToAnnounce(ctx: Ctx, cursor: Pair): Promise<Pair[]> {
  const rows = await ctx.db.read.values<[number, string]>(sql`
    SELECT client_id, provider_id FROM (
      SELECT client_id, provider_id FROM ${obligations} WHERE status = 'OPEN' AND due_at <= ${ctx.clock.now()}
      UNION
      SELECT client_id, provider_id FROM ${commercialNotices} WHERE state <> 'ACTIVE')
    WHERE client_id > ${cursor.clientId} OR (client_id = ${cursor.clientId} AND provider_id > ${cursor.providerId})
    ORDER BY client_id, provider_id LIMIT ${PAGE}`);
  return rows.map(([clientId, providerId]) => ({ clientId, providerId }));
}

/**
 * Announce the pair's billing standing if it changed since the last
 * announcement; answers the event emitted, if any. Also the payment path's
 * way to reactivate at once.
 */
export async function announceStanding(
  tx: Tx,
  pair: Pair,
  now: number,
): Promise<EventType | null> {
  const standing = (await billingStandingOf(tx, pair.clientId, now)).get(pair.providerId);
  const state = standing?.state ?? "ACTIVE";
  const [notice] = await tx.select().from(commercialNotices)
    .where(and(eq(commercialNotices.clientId, pair.clientId), eq(commercialNotices.providerId, pair.providerId)));
  const before = notice?.state ?? "ACTIVE";
  if (state === before) return null;
  await tx.insert(commercialNotices).values({ ...pair, state, updatedAt: now })
    .onConflictDoUpdate({
      target: [commercialNotices.clientId, commercialNotices.providerId],
      set: { state, updatedAt: now },
    });
  const type: EventType = state === "GRACE"
    ? "commercial.grace"
    : state === "SUSPENDED"
    ? "commercial.suspended"
    : "commercial.reactivated";
  const [client] = await tx.select().from(clients).where(eq(clients.id, pair.clientId));
  await emitEvent(tx, {
    type,
    partnerId: client.partnerId,
    tenantId: client.tenantId,
    externalUserId: client.externalUserId,
    occurredAt: now,
    data: {
      providerId: pair.providerId,
      allowed: state !== "SUSPENDED",
      state,
      reasonCode: standing?.reasonCode ?? "B2B_CONTRACT_ACTIVE",
      graceUntil: standing ? new Date(standing.graceUntil).toISOString() : null,
      source: "B2B_CONTRACT",
    },
  });
  return type;
}
