/** `GET /v1/usage`: counted calls per minute over the last `minutes` minutes, with the limits in force. */
import { and, asc, eq, gte } from "drizzle-orm";
import { partners, usageBuckets } from "../../db/schema.ts";
import { iso, MINUTE_MS } from "../clock.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { windowStart } from "./rate_limiter.ts";

export async function getUsage({ ctx, input }: { ctx: Ctx; input: { minutes: number } }) {
  const partnerId = partnerOf(ctx);
  await ctx.rateLimiter.flush(partnerId);
  const from = windowStart(ctx.clock.now()) - (input.minutes - 1) * MINUTE_MS;
  const [limits] = await ctx.db.read.select({
    requestsPerMinute: partners.requestsPerMinute,
    ordersPerMinute: partners.ordersPerMinute,
  }).from(partners).where(eq(partners.partnerId, partnerId));
  const rows = await ctx.db.read.select().from(usageBuckets)
    .where(and(eq(usageBuckets.partnerId, partnerId), gte(usageBuckets.windowStart, from)))
    .orderBy(asc(usageBuckets.windowStart), asc(usageBuckets.kind));
  const total = (kind: string) => rows.filter((r) => r.kind === kind).reduce((sum, r) => sum + r.count, 0);
  return {
    window: { from: iso(from), minutes: input.minutes },
    totals: { requests: total("REQUEST"), orders: total("ORDER") },
    limits,
    buckets: rows.map((r) => ({ window: iso(r.windowStart), kind: r.kind as "REQUEST" | "ORDER", count: r.count })),
  };
}
