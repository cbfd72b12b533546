/**
 * The platform's aggregate exposure on one asset of one provider, against
 * the operator's caps (asset policy): the entries of one signal together, all
 * exposure on the asset, and the asset in one direction.
 *
 * Exposure is the notional of every position the service keeps open on the
 * asset (quantity × entry price) plus every opening not yet settled into a
 * position: at quantity × its limit price (the most it can fill for), or
 * once filled, at what it filled for. It cannot be verified
 * (EXPOSURE_UNVERIFIED) while attribution is pending on the asset: an account
 * the service trades holds a position on it (as its last reconciliation read)
 * that is none of the service's open positions, so neither its origin nor its
 * value is known. Then no entry on the asset is admitted under a cap.
 *
 * Amounts are exact integers at 18 decimal places (notional = quantity ×
 * price, whose decimals are the step's plus the tick's, far fewer).
 */
import { and, eq, isNull, ne, or, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { accountStates, type assetPolicies, intents, positions } from "../../db/schema.ts";
import { formatDec, parseDec } from "../../venues/decimal.ts";

const SCALE = 18;
const MICROS_TO_SCALE = 10n ** BigInt(SCALE - 6);

export interface AggregateCaps {
  signal: bigint | null;
  asset: bigint | null;
  direction: bigint | null;
}

export interface Exposure {
  /** Open and in-flight notional per direction, at 18 decimals. */
  long: bigint;
  short: bigint;
  /** Why it cannot be verified, or null. */
  unverified: string | null;
}

type Policy = typeof assetPolicies.$inferSelect;

/** The policy's caps, or null when it sets none (then exposure need not be read). */
export function capsOf(policy: Policy | null): AggregateCaps | null {
  if (!policy) return null;
  const cap = (micros: number | null) => micros === null ? null : BigInt(micros) * MICROS_TO_SCALE;
  const caps = {
    signal: cap(policy.maxSignalNotionalMicros),
    asset: cap(policy.maxAssetNotionalMicros),
    direction: cap(policy.maxDirectionNotionalMicros),
  };
  return caps.signal === null && caps.asset === null && caps.direction === null ? null : caps;
}

/** quantity × price at the common scale (a finer product, never met in practice, is rounded up: caps stay safe). */
export function notionalOf(quantity: string, price: string): bigint {
  const q = parseDec(quantity);
  const p = parseDec(price);
  const scale = q.scale + p.scale;
  const units = q.units * p.units;
  if (scale <= SCALE) return units * 10n ** BigInt(SCALE - scale);
  const divisor = 10n ** BigInt(scale - SCALE);
  return (units + divisor - 1n) / divisor;
}

export const formatNotional = (units: bigint) => formatDec({ units, scale: SCALE });

/**
 * The exposure now on `symbol` at `providerId`. `exceptSignalId`: the
 * openings of the signal being allocated, which it counts itself.
 */
export async function exposureOn(
  db: Executor,
  providerId: string,
  symbol: string,
  exceptSignalId: string | null,
): Promise<Exposure> {
  const exposure: Exposure = { long: 0n, short: 0n, unverified: null };
  const add = (side: string, notional: bigint) => {
    if (side === "LONG" || side === "BUY") exposure.long += notional;
    else exposure.short += notional;
  };
  const open = await db.select({ side: positions.side, quantity: positions.quantity, price: positions.entryPrice })
    .from(positions)
    .where(and(eq(positions.providerId, providerId), eq(positions.symbol, symbol), eq(positions.status, "OPEN")));
  for (const row of open) add(row.side, notionalOf(row.quantity, row.price));

  const openings = await db.select({
    side: intents.side,
    quantity: intents.quantity,
    price: intents.price,
    status: intents.status,
    executedQuantity: intents.executedQuantity,
    executedPrice: intents.executedPrice,
  })
    .from(intents)
    .leftJoin(positions, eq(positions.entryIntentId, intents.id))
    .where(and(
      eq(intents.providerId, providerId),
      eq(intents.symbol, symbol),
      eq(intents.opensPosition, true),
      sql`${intents.status} IN ('SUBMITTING', 'UNCERTAIN', 'ACCEPTED', 'PARTIALLY_FILLED', 'FILLED')`,
      isNull(positions.positionId),
      exceptSignalId === null ? undefined : or(isNull(intents.signalId), ne(intents.signalId, exceptSignalId)),
    ));
  let openingWithoutPosition = false;
  for (const row of openings) {
    const filled = row.status === "FILLED";
    if (filled) openingWithoutPosition = true;
    const [quantity, price] = filled ? [row.executedQuantity, row.executedPrice] : [row.quantity, row.price];
    // Openings are LIMIT and fills carry their price; one without is not valued, and not guessed.
    if (price === null) exposure.unverified = "Uma entrada neste ativo não tem preço conhecido.";
    else add(row.side, notionalOf(quantity, price));
  }
  if (!openingWithoutPosition && await unattributedPositionOn(db, providerId, symbol)) {
    exposure.unverified = "Há posição neste ativo em conta operada pela plataforma sem atribuição a uma posição " +
      "da plataforma (aguarda reconciliação ou foi aberta fora dela).";
  }
  return exposure;
}

/**
 * Whether some account's venue position on the asset (last reconciliation)
 * is none of the service's open positions. A filled opening whose position is
 * still being recorded would look the same, so the caller asks only when
 * there is none.
 */
async function unattributedPositionOn(db: Executor, providerId: string, symbol: string): Promise<boolean> {
  const [row] = await db.values(sql`SELECT 1 FROM ${accountStates}, json_each(${accountStates.positions}) AS held
    WHERE ${accountStates.providerId} = ${providerId} AND held.value->>'symbol' = ${symbol}
      AND NOT EXISTS (SELECT 1 FROM ${positions} WHERE ${positions.clientId} = ${accountStates.clientId}
        AND ${positions.providerId} = ${providerId} AND ${positions.symbol} = ${symbol} AND ${positions.status} = 'OPEN')
    LIMIT 1`);
  return row !== undefined;
}

/** Which cap one more entry of `notional` would break, or null when it fits. */
export function capBroken(
  caps: AggregateCaps,
  exposure: Exposure,
  side: "BUY" | "SELL",
  signalTotal: bigint,
  notional: bigint,
): string | null {
  const direction = side === "BUY" ? exposure.long : exposure.short;
  const over = (cap: bigint | null, total: bigint) => cap !== null && total + notional > cap;
  if (over(caps.signal, signalTotal)) return `o limite por sinal (${formatNotional(caps.signal!)} USD)`;
  if (over(caps.asset, exposure.long + exposure.short)) {
    return `o limite agregado do ativo (${formatNotional(caps.asset!)} USD)`;
  }
  if (over(caps.direction, direction)) return `o limite agregado na direção (${formatNotional(caps.direction!)} USD)`;
  return null;
}
