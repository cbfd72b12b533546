/**
 * A client's standing at each provider as its open obligations make it
 * (spec, Commercial and billing cycle): an obligation past its due date puts
 * the provider in GRACE for 24 hours (entries still allowed), one past its
 * grace SUSPENDS new entries (`OBLIGATION_OVERDUE`) until it is paid or
 * cancelled. Maintenance never reads this.
 */
import { and, asc, eq, lte, sql } from "drizzle-orm";
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

/** Open obligations already due, the one whose grace ends first first. */
const dueObligations = preparedFor((db) =>
  db.select({
    providerId: obligations.providerId,
    source: obligations.source,
    graceUntil: obligations.graceUntil,
  }).from(obligations).where(and(
    eq(obligations.clientId, sql.placeholder("clientId")),
    eq(obligations.status, "OPEN"),
    lte(obligations.dueAt, sql.placeholder("now")),
  )).orderBy(asc(obligations.graceUntil)).prepare()
);

export async function billingStandingOf(
  db: Executor,
  clientId: number,
  now: number,
): Promise<Map<string, BillingStanding>> {
  const standing = new Map<string, BillingStanding>();
  for (const due of await dueObligations(db).all({ clientId, now })) {
    if (standing.has(due.providerId)) continue;
    standing.set(
      due.providerId,
      due.graceUntil <= now
        ? { state: "SUSPENDED", reasonCode: "OBLIGATION_OVERDUE", graceUntil: due.graceUntil }
        : { state: "GRACE", reasonCode: `${due.source}_GRACE`, graceUntil: due.graceUntil },
    );
  }
  return standing;
}
