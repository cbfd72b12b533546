/**
 * What statements are made of, read set-based: the confirmed portions of a
 * period summed per client and provider, the carry a pair brings in from its
 * last stated period, and its credit balance. Every read takes a page of
 * pairs at once, never one query per client.
 */
import { sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { clients, credits, performancePortions, resultFacts, statements } from "../../db/schema.ts";
import type { PeriodSums } from "./figures.ts";

export interface Pair {
  clientId: number;
  providerId: string;
}

export interface PairSums extends Pair, PeriodSums {
  tenantId: string | null;
  externalUserId: string;
  /** Portions of the period still PENDING: the statement says so; their results come as adjustments. */
  pendingPortions: number;
}

export const pairKey = (pair: Pair) => `${pair.clientId}:${pair.providerId}`;

const SUMS = sql`
  sum(CASE WHEN p.status = 'CONFIRMED' THEN p.net_micros ELSE 0 END),
  sum(CASE WHEN p.status = 'CONFIRMED' THEN p.realized_micros ELSE 0 END),
  sum(CASE WHEN p.status = 'CONFIRMED' THEN p.venue_fees_micros ELSE 0 END),
  sum(CASE WHEN p.status = 'CONFIRMED' THEN p.funding_micros ELSE 0 END),
  sum(CASE WHEN p.status = 'CONFIRMED' THEN p.builder_fees_micros ELSE 0 END),
  sum(CASE WHEN p.status = 'CONFIRMED' THEN p.facts_count ELSE 0 END),
  sum(CASE WHEN p.status = 'PENDING' THEN 1 ELSE 0 END)`;

type SumsRow = [number, string, string | null, string, number, number, number, number, number, number, number];

function sumsOf(row: SumsRow): PairSums {
  const [clientId, providerId, tenantId, externalUserId, net, realized, venueFees, funding, builder, facts, pending] =
    row;
  return {
    clientId,
    providerId,
    tenantId,
    externalUserId,
    netMicros: net,
    realizedMicros: realized,
    venueFeesMicros: venueFees,
    fundingMicros: funding,
    builderFeesMicros: builder,
    sourceFactsCount: facts,
    pendingPortions: pending,
  };
}

/**
 * The pairs of a partner's clients after `afterClientId` with a portion in
 * [start, end), summed, for up to `clients` clients (every pair of a client
 * is in the same page). The page walks the portions in client order from the
 * cursor (CROSS JOIN keeps that order): led by the partner's clients instead,
 * SQLite read all of them for every page.
 */
export async function periodPairsPage(
  db: Executor,
  partnerId: string,
  period: { start: number; end: number },
  afterClientId: number,
  clientsPerPage: number,
): Promise<PairSums[]> {
  const rows = await db.values<SumsRow>(sql`
    WITH page AS MATERIALIZED (
      SELECT DISTINCT p.client_id AS id FROM ${performancePortions} p
      CROSS JOIN ${clients} c ON c.id = p.client_id AND c.partner_id = ${partnerId}
      WHERE p.client_id > ${afterClientId} AND p.closed_at >= ${period.start} AND p.closed_at < ${period.end}
      ORDER BY p.client_id LIMIT ${clientsPerPage})
    SELECT p.client_id, p.provider_id, c.tenant_id, c.external_user_id, ${SUMS}
    FROM page JOIN ${performancePortions} p ON p.client_id = page.id
    JOIN ${clients} c ON c.id = p.client_id
    WHERE p.closed_at >= ${period.start} AND p.closed_at < ${period.end}
    GROUP BY p.client_id, p.provider_id
    ORDER BY p.client_id, p.provider_id`);
  return rows.map(sumsOf);
}

// The reads of one pair run on every GET performance: built once per connection, answering rows as arrays
// (`values`) as the page reads do; one select field stands for the whole column list.
// A left join: a pair with no portion in the period sums to zeros (each CASE falls to its ELSE).
const sumsOfPair = preparedFor((db) =>
  db.select({ row: sql`c.id, ${sql.placeholder("providerId")}, c.tenant_id, c.external_user_id, ${SUMS}` })
    .from(sql`${clients} c LEFT JOIN ${performancePortions} p ON p.client_id = c.id
      AND p.provider_id = ${sql.placeholder("providerId")}
      AND p.closed_at >= ${sql.placeholder("start")} AND p.closed_at < ${sql.placeholder("end")}`)
    .where(sql`c.id = ${sql.placeholder("clientId")}`)
    .groupBy(sql`c.id`)
    .prepare()
);

/** One pair's confirmed portions in [start, end), summed, with the parties of its events. */
export async function pairPeriodSums(
  db: Executor,
  pair: Pair,
  period: { start: number; end: number },
): Promise<PairSums> {
  const [row] = await sumsOfPair(db).values({ ...pair, ...period }) as unknown as SumsRow[];
  return sumsOf(row);
}

/**
 * Each pair's carry out of its last stated period before `before` (its
 * ORIGINAL plus ADJUSTMENTs): zero for a pair never stated.
 */
export async function carriesIn(db: Executor, pairs: Pair[], before: number): Promise<Map<string, number>> {
  if (!pairs.length) return new Map();
  const rows = await db.values<[number, string, number]>(sql`
    WITH pair(client_id, provider_id) AS MATERIALIZED
      (SELECT value->>'clientId', value->>'providerId' FROM json_each(${JSON.stringify(pairs)})),
    last AS (
      SELECT s.client_id, s.provider_id, max(s.period_start) AS start FROM pair
      JOIN ${statements} s ON s.client_id = pair.client_id AND s.provider_id = pair.provider_id
        AND s.period_start < ${before}
      GROUP BY s.client_id, s.provider_id)
    SELECT s.client_id, s.provider_id, sum(s.carry_out_micros) FROM last
    JOIN ${statements} s ON s.client_id = last.client_id AND s.provider_id = last.provider_id
      AND s.period_start = last.start
    GROUP BY s.client_id, s.provider_id`);
  return new Map(rows.map(([clientId, providerId, carry]) => [pairKey({ clientId, providerId }), carry]));
}

/** Each pair's credit balance (granted by negative adjustments, less what later fees used). */
export async function creditBalances(db: Executor, pairs: Pair[]): Promise<Map<string, number>> {
  if (!pairs.length) return new Map();
  const rows = await db.values<[number, string, number]>(sql`
    WITH pair(client_id, provider_id) AS MATERIALIZED
      (SELECT value->>'clientId', value->>'providerId' FROM json_each(${JSON.stringify(pairs)}))
    SELECT k.client_id, k.provider_id, sum(k.amount_micros) FROM pair
    JOIN ${credits} k ON k.client_id = pair.client_id AND k.provider_id = pair.provider_id
    GROUP BY k.client_id, k.provider_id`);
  return new Map(rows.map(([clientId, providerId, balance]) => [pairKey({ clientId, providerId }), balance]));
}

const pendingBefore = preparedFor((db) =>
  db.select({ count: sql`count(*)` }).from(performancePortions)
    .where(sql`client_id = ${sql.placeholder("clientId")} AND provider_id = ${sql.placeholder("providerId")}
      AND closed_at < ${sql.placeholder("before")} AND status = 'PENDING'`)
    .prepare()
);

/**
 * Portions of the pair dated before `before` (the live period's start) still
 * PENDING: results of ended periods that a missing fact holds back, each to
 * be stated with its own period once confirmed (by its ORIGINAL if the close
 * has not reached it yet, else by an ADJUSTMENT).
 */
export async function pendingBeforeCount(db: Executor, pair: Pair, before: number): Promise<number> {
  const [[count]] = await pendingBefore(db).values({ ...pair, before }) as unknown as [number][];
  return count;
}

const attributionPending = preparedFor((db) =>
  db.select({ count: sql`count(*)` }).from(resultFacts)
    .where(sql`client_id = ${sql.placeholder("clientId")} AND provider_id = ${sql.placeholder("providerId")}
      AND role = 'ATTRIBUTION_PENDING'
      AND occurred_at >= ${sql.placeholder("start")} AND occurred_at < ${sql.placeholder("end")}`)
    .prepare()
);

/** Facts of the pair in [start, end) that belong to no service position (ATTRIBUTION_PENDING): never performance. */
export async function attributionPendingCount(
  db: Executor,
  pair: Pair,
  period: { start: number; end: number },
): Promise<number> {
  const [[count]] = await attributionPending(db).values({ ...pair, ...period }) as unknown as [number][];
  return count;
}
