/**
 * A client's standing at each provider as its open obligations make it
 * (spec, Commercial and billing cycle): an obligation past its due date puts
 * the provider in GRACE for 24 hours (entries still allowed), one past its
 * grace SUSPENDS new entries (`OBLIGATION_OVERDUE`) until it is paid or
 * cancelled. Maintenance never reads this.
 */
import { asc, type Placeholder, type SQL, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { obligations } from "../../db/schema.ts";

export interface BillingStanding {
  state: "GRACE" | "SUSPENDED";
  /** OBLIGATION_OVERDUE, or `<source>_GRACE` for the obligation whose grace ends first. */
  reasonCode: string;
  graceUntil: number;
}

/** A client with no obligation due. */
export const NO_STANDING: ReadonlyMap<string, BillingStanding> = new Map();

/**
 * A client's obligations are found through its own index. The unary `+`
 * keeps SQLite's planner (which has no statistics: nothing runs ANALYZE)
 * from choosing `obligations_open_due` for `status = 'OPEN' AND due_at <= ?`:
 * that walks every due obligation of every client, ~8 ms a read with 50,000
 * of them open, where the client's own index reads a handful.
 */
const ofClientOpenAndDue = (clientId: SQL | Placeholder, now: SQL | Placeholder) =>
  sql`${obligations.clientId} = ${clientId} AND +${obligations.status} = 'OPEN' AND +${obligations.dueAt} <= ${now}`;

/** Open obligations already due, the one whose grace ends first first. */
const dueObligations = preparedFor((db) =>
  db.select({
    providerId: obligations.providerId,
    source: obligations.source,
    graceUntil: obligations.graceUntil,
  }).from(obligations)
    .where(ofClientOpenAndDue(sql.placeholder("clientId"), sql.placeholder("now")))
    .orderBy(asc(obligations.graceUntil)).prepare()
);

export async function billingStandingOf(
  db: Executor,
  clientId: number,
  now: number,
): Promise<Map<string, BillingStanding>> {
  return standingOf(await dueObligations(db).all({ clientId, now }), now);
}

/** Due obligations as `dueObligationsJson` lists them: [providerId, source, graceUntil], earliest grace first. */
export type DueObligation = { providerId: string; source: string; graceUntil: number };

/** The standing per provider from its due obligations (earliest grace end first). */
export function standingOf(due: DueObligation[], now: number): Map<string, BillingStanding> {
  const standing = new Map<string, BillingStanding>();
  for (const obligation of due) {
    if (standing.has(obligation.providerId)) continue;
    standing.set(
      obligation.providerId,
      obligation.graceUntil <= now
        ? { state: "SUSPENDED", reasonCode: "OBLIGATION_OVERDUE", graceUntil: obligation.graceUntil }
        : { state: "GRACE", reasonCode: `${obligation.source}_GRACE`, graceUntil: obligation.graceUntil },
    );
  }
  return standing;
}

/**
 * The same due obligations as a JSON column of a one-row read of the client
 * (the status read is one statement): `clientId` and `now` are the row's
 * client id column and the placeholder for now.
 */
export function dueObligationsJson(clientId: SQL, now: SQL): SQL<string> {
  return sql<string>`(SELECT json_group_array(json_array(provider_id, source, grace_until)) FROM
    (SELECT ${obligations.providerId} AS provider_id, ${obligations.source} AS source,
      ${obligations.graceUntil} AS grace_until FROM ${obligations}
     WHERE ${ofClientOpenAndDue(clientId, now)}
     ORDER BY ${obligations.graceUntil}))`;
}

export function parseDueObligations(json: string): DueObligation[] {
  return (JSON.parse(json) as [string, string, number][]).map(([providerId, source, graceUntil]) => ({
    providerId,
    source,
    graceUntil,
  }));
}
