/**
 * A position's protective legs, as the reconciliation (position_maintenance.ts)
 * and the protection monitor (verify_account_protection.ts) both judge them.
 * A leg is one stop or target intent; a stop moved (break-even, SET_STOP_LOSS)
 * or placed again is a new intent, so only the latest of each counts. Placing
 * a missing leg again spends one of the position's few attempts, claimed in
 * the database: several instances, and both jobs, keep the same position.
 */
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { positions } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import type { IntentRow } from "./intents.ts";
import type { Leg, PositionRow } from "./protection.ts";

/** Placements of missing legs allowed until the position is PROTECTED again; then it stays degraded. */
export const PLACEMENT_ATTEMPTS = 3;

/** Leg statuses under which the order may still be working at the venue (or its fate is not known yet). */
export const WORKING = new Set(["SUBMITTING", "UNCERTAIN", "ACCEPTED", "PARTIALLY_FILLED"]);

export function latestStop(legs: IntentRow[]): IntentRow | undefined {
  return legs.findLast((leg) => leg.type === "STOP_LOSS");
}

/**
 * The legs that should be working now: the latest stop, and the latest leg of
 * each target the position still has, unless it filled (targets replaced at
 * other prices by SET_TAKE_PROFIT are no longer wanted).
 */
export function legsToKeep(position: PositionRow, legs: IntentRow[]): IntentRow[] {
  const prices = new Set(position.takeProfits.map((target) => target.price));
  const targets = new Map<string, IntentRow>();
  for (const leg of legs) {
    if (leg.type === "TAKE_PROFIT" && prices.has(leg.triggerPrice!)) targets.set(leg.triggerPrice!, leg);
  }
  const stop = latestStop(legs);
  return [...(stop ? [stop] : []), ...[...targets.values()].filter((leg) => leg.status !== "FILLED")];
}

/** A stop covering the whole position as the venue holds it. */
export const stopAt = (triggerPrice: string, quantity: string): Leg => ({ kind: "STOP_LOSS", triggerPrice, quantity });

/**
 * Claim the position's next placement attempt (compare-and-set on the count
 * it was read with, so one process places per attempt). Answers the position
 * with the attempt counted, or null when none is left, another process took
 * it, or the position closed.
 */
export async function claimAttempt(ctx: Ctx, position: PositionRow): Promise<PositionRow | null> {
  if (position.protectionAttempts >= PLACEMENT_ATTEMPTS) return null;
  const [row] = await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(positions).set({ protectionAttempts: position.protectionAttempts + 1 })
        .where(and(
          eq(positions.positionId, position.positionId),
          eq(positions.status, "OPEN"),
          eq(positions.protectionAttempts, position.protectionAttempts),
        ))
        .returning(),
  );
  return row ?? null;
}

const LEG_NAMES: Record<string, string> = { STOP_LOSS: "stop loss", TAKE_PROFIT: "alvo" };
const LEG_STATUSES: Record<string, string> = {
  SUBMITTING: "em envio",
  UNCERTAIN: "sem confirmação",
  ACCEPTED: "aceita",
  PARTIALLY_FILLED: "parcialmente executada",
  FILLED: "executada",
  CANCELED: "cancelada",
  EXPIRED: "expirada",
  REJECTED: "recusada",
  NOT_PLACED: "não colocada",
};

/**
 * The pt-BR `protection.reason` of a position whose `unconfirmed` legs are not
 * working, with where its placement attempts stand.
 */
export function degradedReason(position: PositionRow, unconfirmed: IntentRow[]): string {
  const legs = unconfirmed.map((leg) => {
    const status = [LEG_STATUSES[leg.status] ?? leg.status, ...(leg.errorCode ? [leg.errorCode] : [])].join(", ");
    return `${LEG_NAMES[leg.type] ?? leg.type} ${leg.triggerPrice} (${status})`;
  }).join("; ");
  const attempts = position.protectionAttempts;
  const budget = attempts >= PLACEMENT_ATTEMPTS
    ? ` Recolocação esgotada após ${PLACEMENT_ATTEMPTS} tentativas: a posição precisa de atenção.`
    : attempts > 0
    ? ` Recolocação: tentativa ${attempts} de ${PLACEMENT_ATTEMPTS}.`
    : "";
  return `Proteção não confirmada no provedor: ${legs}.${budget}`;
}
