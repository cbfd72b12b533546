/**
 * Webhook deliveries (spec, Webhook delivery). Each event of a partner with
 * an endpoint becomes one delivery; an attempt is a signed POST of the event
 * envelope that ends it on a 2xx within 10 seconds. Anything else schedules
 * the next attempt with the same eventId after 1, 2, 4 … minutes (at most 6
 * hours), twelve attempts in all, then DEAD until the operator resends it.
 * Schedules run on the service clock (the QA test clock); every attempt is
 * recorded. A due delivery is leased to the sender for longer than an
 * attempt can take, so a crash only delays it, and nothing sends it twice at
 * once.
 */
import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema.ts";
import { HOUR_MS, iso, MINUTE_MS, wallClockNow } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { eventEnvelope } from "../events/list_events.ts";
import { signingSecrets } from "./endpoints.ts";
import { signatureHeader } from "./signature.ts";

export const MAX_ATTEMPTS = 12;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longer than an attempt can take: a lease that runs out means its sender died. */
export const LEASE_MS = 3 * ATTEMPT_TIMEOUT_MS;
const ENQUEUE_BATCH = 1_000;
/** The most of an answer's body that is read and kept: the rest is never read. */
const EXCERPT_BYTES = 512;

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** The wait after failed attempt `attempt` (1-based): 1, 2, 4 … minutes, at most 6 hours. */
export function retryDelayMs(attempt: number): number {
  return Math.min(2 ** (attempt - 1) * MINUTE_MS, 6 * HOUR_MS);
}

/** New events of every partner with an endpoint become deliveries, due now; answers how many. */
export async function enqueueNewEvents(ctx: Ctx): Promise<number> {
  let made = 0;
  const now = ctx.clock.now();
  for (const endpoint of await ctx.db.read.select().from(webhookEndpoints)) {
    made += await withTransaction(ctx.db, async (tx) => {
      const [{ last }] = await tx.select({ last: sql<number | null>`max(seq)` }).from(
        sql`(SELECT ${events.seq} AS seq FROM ${events} WHERE ${events.partnerId} = ${endpoint.partnerId}
          AND ${events.seq} > ${endpoint.afterSeq} ORDER BY ${events.seq} LIMIT ${ENQUEUE_BATCH})`,
      );
      if (last === null) return 0;
      const inserted = await tx.run(sql`INSERT INTO ${webhookDeliveries}
          (delivery_id, partner_id, event_seq, event_id, status, attempts, next_attempt_at, created_at)
        SELECT 'dlv_' || substr(event_id, 5), partner_id, seq, event_id, 'PENDING', 0, ${now}, ${now}
        FROM ${events} WHERE ${events.partnerId} = ${endpoint.partnerId}
          AND ${events.seq} > ${endpoint.afterSeq} AND ${events.seq} <= ${last}
        ON CONFLICT DO NOTHING`);
      await tx.update(webhookEndpoints).set({ afterSeq: last })
        .where(
          and(eq(webhookEndpoints.partnerId, endpoint.partnerId), eq(webhookEndpoints.afterSeq, endpoint.afterSeq)),
        );
      return (inserted as unknown as { changes: number }).changes;
    });
  }
  return made;
}

/**
 * Lease up to `limit` due deliveries, at most `perPartner` of a partner
 * beyond what it already has in flight (`busy`): a partner with a slow or
 * dead endpoint holds its own slots, never another partner's.
 */
export async function claimDue(
  ctx: Ctx,
  limit: number,
  perPartner: number,
  busy: ReadonlyMap<string, number>,
  leaseMs = LEASE_MS,
): Promise<DeliveryRow[]> {
  const wall = wallClockNow();
  const atCap = [...busy].flatMap(([partnerId, count]) => count >= perPartner ? [partnerId] : []);
  // Each partner's own first few, and none of a partner already at its cap: a partner whose endpoint hangs
  // keeps its deliveries waiting behind its own attempts, never in front of another partner's.
  const due = await ctx.db.read.values<[string, string]>(sql`
    SELECT delivery_id, partner_id FROM (
      SELECT delivery_id, partner_id, next_attempt_at, event_seq,
        row_number() OVER (PARTITION BY partner_id ORDER BY next_attempt_at, event_seq) AS rank
      FROM ${webhookDeliveries}
      WHERE status = 'PENDING' AND next_attempt_at <= ${ctx.clock.now()} AND claimed_until <= ${wall}
        AND partner_id NOT IN (SELECT value FROM json_each(${JSON.stringify(atCap)})))
    WHERE rank <= ${perPartner}
    ORDER BY next_attempt_at, event_seq
    LIMIT ${limit * 4}`);
  const taken = new Map(busy);
  const chosen = due.filter(([, partnerId]) => {
    const count = taken.get(partnerId) ?? 0;
    if (count >= perPartner) return false;
    taken.set(partnerId, count + 1);
    return true;
  }).slice(0, limit).map(([deliveryId]) => deliveryId);
  if (!chosen.length) return [];
  return await withTransaction(ctx.db, (tx) =>
    tx.update(webhookDeliveries).set({ claimedUntil: wall + leaseMs })
      .where(and(
        inArray(webhookDeliveries.deliveryId, chosen),
        eq(webhookDeliveries.status, "PENDING"),
        lte(webhookDeliveries.claimedUntil, wall),
      ))
      .returning());
}

/** One attempt: POST the signed envelope, record what happened, schedule what follows. */
export async function attemptDelivery(ctx: Ctx, delivery: DeliveryRow): Promise<"DELIVERED" | "PENDING" | "DEAD"> {
  const [endpoint] = await ctx.db.read.select().from(webhookEndpoints)
    .where(eq(webhookEndpoints.partnerId, delivery.partnerId));
  const [event] = await ctx.db.read.select().from(events).where(eq(events.seq, delivery.eventSeq));
  const body = JSON.stringify(eventEnvelope(event));
  const timestamp = Math.floor(wallClockNow() / 1000);
  const headers = {
    "content-type": "application/json",
    "x-svc-event-id": event.eventId,
    "x-svc-event-type": event.eventType,
    "x-svc-timestamp": String(timestamp),
    "x-svc-signature": await signatureHeader(await signingSecrets(ctx, endpoint), timestamp, body),
  };
  const started = performance.now();
  const answer = await ctx.outbound.post({
    url: endpoint.url,
    headers,
    body,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    excerptBytes: EXCERPT_BYTES,
  });
  const responseCode = answer.kind === "answered" ? answer.status : null;
  const excerpt = answer.kind === "answered" ? answer.excerpt : answer.reason.slice(0, EXCERPT_BYTES);
  const latencyMs = Math.round(performance.now() - started);
  const delivered = responseCode !== null && responseCode >= 200 && responseCode < 300 &&
    latencyMs <= ATTEMPT_TIMEOUT_MS;
  const attempt = delivery.attempts + 1;
  const now = ctx.clock.now();
  const status = delivered ? "DELIVERED" : attempt >= MAX_ATTEMPTS ? "DEAD" : "PENDING";
  await withTransaction(ctx.db, async (tx) => {
    // Numbered over the delivery's whole history: a resent delivery keeps its earlier attempts.
    const [{ earlier }] = await tx.select({ earlier: sql<number>`count(*)` }).from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, delivery.deliveryId));
    await tx.insert(webhookAttempts).values({
      deliveryId: delivery.deliveryId,
      attempt: earlier + 1,
      at: now,
      latencyMs,
      responseCode,
      excerpt,
    });
    await tx.update(webhookDeliveries).set({
      status,
      attempts: attempt,
      nextAttemptAt: status === "PENDING" ? now + retryDelayMs(attempt) : delivery.nextAttemptAt,
      claimedUntil: 0,
      lastResponseCode: responseCode,
      lastError: delivered ? null : excerpt,
      deliveredAt: delivered ? now : null,
    }).where(
      and(eq(webhookDeliveries.deliveryId, delivery.deliveryId), eq(webhookDeliveries.attempts, delivery.attempts)),
    );
  });
  return status;
}

/** Operator: a DEAD delivery is due again now, with a fresh count of attempts (its history is kept). */
export async function resendDelivery(ctx: Ctx, deliveryId: string) {
  return await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.update(webhookDeliveries)
      .set({ status: "PENDING", attempts: 0, nextAttemptAt: ctx.clock.now(), claimedUntil: 0 })
      .where(and(eq(webhookDeliveries.deliveryId, deliveryId), eq(webhookDeliveries.status, "DEAD")))
      .returning();
    if (!row) {
      const [existing] = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.deliveryId, deliveryId));
      if (!existing) throw new ApiError("NOT_FOUND");
      throw new ApiError("STATE_CONFLICT", { message: "Só uma entrega DEAD pode ser reenviada." });
    }
    return row;
  });
}

/** Operator: a partner's deliveries (newest first), each with its attempts. */
export async function listDeliveries(ctx: Ctx, input: { partnerId: string; status?: string; limit: number }) {
  const rows = await ctx.db.read.select().from(webhookDeliveries)
    .where(and(
      eq(webhookDeliveries.partnerId, input.partnerId),
      input.status ? eq(webhookDeliveries.status, input.status) : undefined,
    ))
    .orderBy(sql`${webhookDeliveries.eventSeq} DESC`).limit(input.limit);
  const attempts = rows.length
    ? await ctx.db.read.select().from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, rows.map((row) => row.deliveryId)))
      .orderBy(asc(webhookAttempts.attempt))
    : [];
  return rows.map((row) => ({
    deliveryId: row.deliveryId,
    eventId: row.eventId,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === "PENDING" ? iso(row.nextAttemptAt) : null,
    deliveredAt: row.deliveredAt === null ? null : iso(row.deliveredAt),
    lastResponseCode: row.lastResponseCode,
    lastError: row.lastError,
    history: attempts.filter((attempt) => attempt.deliveryId === row.deliveryId).map((attempt) => ({
      attempt: attempt.attempt,
      at: iso(attempt.at),
      latencyMs: attempt.latencyMs,
      responseCode: attempt.responseCode,
      excerpt: attempt.excerpt,
    })),
  }));
}
