/**
 * Venue positions the service did not open. After a reconciliation has
 * settled the account's intents (a filled entry, also one whose process died
 * before recording it, is adopted there: its position opens, is protected
 * per the setup and announced once by `position.opened`) and kept its
 * positions, a position the venue still holds that none of the service's
 * positions or entries explains was opened elsewhere (by the client, another
 * tool). The service does not protect what it did not open, and knows no stop
 * for it; it says so, once: the position is kept on the account
 * (`account_states.external_positions`) under an id of its own, listed in
 * execution-status with protection UNKNOWN and the reason, and announced by
 * `protection.degraded`; when the venue no longer holds it, `position.closed`.
 * The entry gates already count such a position (a taken slot, mixed external
 * exposure), so no new entry is sent beside it.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { preparedFor, withTransaction } from "../../db/client.ts";
import { accountStates, clients, type ExternalPosition, intents, positions } from "../../db/schema.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { iso } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { emitEvent } from "../events/emit_event.ts";
import { newId } from "../ids.ts";
import { isZero } from "../../venues/decimal.ts";
import type { Position } from "../../venues/types.ts";
import { type EntryLease, entryLeaseState } from "./entry_leases.ts";
import { OPEN_STATUSES } from "./intents.ts";
import type { PositionRow } from "./protection.ts";

export const EXTERNAL_REASON =
  "Posição no provedor que não foi aberta pelo serviço: o serviço não a protege (sem stop nem alvos dele) e não abre novas entradas na conta enquanto ela existir.";

/**
 * Record the account's external positions from the venue read of this
 * reconciliation. `held`: the service's open positions as read before the
 * venue was (a position it closed since may still show in that read).
 * Skipped while an entry of the account is at work (its fill may be at the
 * venue and not yet recorded) unless the caller holds that lease.
 */
export async function reportExternalPositions(
  ctx: Ctx,
  account: AccountRow,
  venuePositions: Position[],
  held: PositionRow[],
  lease?: EntryLease,
): Promise<void> {
  const key = { clientId: account.clientId, providerId: account.providerId };
  const same = (a: { symbol: string; side: string }, b: { symbol: string; side: string }) =>
    a.symbol === b.symbol && a.side === b.side;
  // The usual case, every position the venue holds is one of the service's and none was reported: no more reads.
  let unexplained = venuePositions.filter((position) => !held.some((own) => same(own, position)));
  const [stored] = await externalOf(ctx.db.read).all(key);
  if (!unexplained.length && !stored?.external.length) return;
  if (!lease && await entryLeaseState(ctx.db.read, key) === "HELD") return;
  const ours = await openPositionsOf(ctx.db.read).all(key);
  const entries = await entriesOf(ctx.db.read).all(key);
  unexplained = unexplained.filter((position) =>
    !ours.some((own) => same(own, position)) &&
    !entries.some((entry) =>
      entry.symbol === position.symbol && sideOfEntry(entry.side) === position.side &&
      (OPEN_STATUSES.has(entry.status) || (!isZero(entry.executedQuantity) && !entry.positionOpened))
    )
  );
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    const [state] = await tx.select({ external: accountStates.externalPositions }).from(accountStates)
      .where(and(eq(accountStates.clientId, key.clientId), eq(accountStates.providerId, key.providerId)));
    if (!state) return;
    const before = state.external;
    const after: ExternalPosition[] = unexplained.map((position) => {
      const known = before.find((external) => same(external, position));
      return {
        positionId: known?.positionId ?? newId("ext", now),
        symbol: position.symbol,
        side: position.side,
        quantity: position.quantity,
        entryPrice: position.entryPrice,
        leverage: position.leverage,
        seenAt: known?.seenAt ?? now,
      };
    });
    const unchanged = after.length === before.length &&
      after.every((external) => before.some((old) => JSON.stringify(old) === JSON.stringify(external)));
    if (unchanged) return;
    await tx.update(accountStates).set({ externalPositions: after })
      .where(and(eq(accountStates.clientId, key.clientId), eq(accountStates.providerId, key.providerId)));
    const [client] = await tx.select({
      partnerId: clients.partnerId,
      tenantId: clients.tenantId,
      externalUserId: clients.externalUserId,
    }).from(clients).where(eq(clients.id, key.clientId));
    const announce = (type: "protection.degraded" | "position.closed", external: ExternalPosition) =>
      emitEvent(tx, {
        type,
        ...client,
        occurredAt: now,
        data: {
          ...externalPositionView(account.providerId, external),
          status: type === "position.closed" ? "CLOSED" : "OPEN",
        },
      });
    for (const external of after) {
      if (!before.some((old) => same(old, external))) await announce("protection.degraded", external);
    }
    // Gone from the venue: its end is announced. One the service now explains (an entry adopted late) just leaves the list.
    for (const old of before) {
      if (!after.some((external) => same(external, old)) && !venuePositions.some((position) => same(position, old))) {
        await announce("position.closed", old);
      }
    }
  });
}

const sideOfEntry = (side: string) => side === "BUY" ? "LONG" : "SHORT";

const externalOf = preparedFor((db) =>
  db.select({ external: accountStates.externalPositions }).from(accountStates).where(and(
    eq(accountStates.clientId, sql.placeholder("clientId")),
    eq(accountStates.providerId, sql.placeholder("providerId")),
  )).prepare()
);

/** The account's open positions, as the service keeps them. */
export const openPositionsOf = preparedFor((db) =>
  db.select().from(positions).where(and(
    eq(positions.clientId, sql.placeholder("clientId")),
    eq(positions.providerId, sql.placeholder("providerId")),
    eq(positions.status, "OPEN"),
  )).prepare()
);

/**
 * The account's entries still open at the venue, and those holding a fill
 * (filled, or cancelled or expired after a partial fill) that opened no
 * position yet: the service knows their positions, adopting them.
 */
const entriesOf = preparedFor((db) =>
  db.select({
    symbol: intents.symbol,
    side: intents.side,
    status: intents.status,
    executedQuantity: intents.executedQuantity,
    positionOpened: sql<boolean>`EXISTS (SELECT 1 FROM ${positions} WHERE ${positions.entryIntentId} = ${intents.id})`
      .mapWith(Boolean),
  }).from(intents).where(and(
    eq(intents.clientId, sql.placeholder("clientId")),
    eq(intents.providerId, sql.placeholder("providerId")),
    eq(intents.opensPosition, true),
    inArray(intents.status, [...OPEN_STATUSES, "FILLED", "CANCELED", "EXPIRED"]),
  )).prepare()
);

/** An external position in the form of the Position resource (spec, Position and protection). */
export function externalPositionView(providerId: string, external: ExternalPosition) {
  return {
    positionId: external.positionId,
    providerId,
    symbol: external.symbol,
    side: external.side as "LONG" | "SHORT",
    quantity: Number(external.quantity),
    entryPrice: Number(external.entryPrice),
    leverage: external.leverage,
    protection: { status: "UNKNOWN", stopLossPrice: null, takeProfitPrice: null, reason: EXTERNAL_REASON },
    openedAt: iso(external.seenAt),
    origin: "EXTERNAL" as const,
  };
}
