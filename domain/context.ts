/**
 * What every domain verb receives: the dependencies of the running service,
 * who is acting, and the request id for logs.
 */
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { VenueRegistry } from "../venues/types.ts";
import type { Caches } from "./cache.ts";
import type { Clock, TestableClock } from "./clock.ts";
import type { Logger } from "./logger.ts";
import type { IdempotentAnswer } from "./idempotency/idempotency_keys.ts";
import type { SecretBox } from "./secrets/secret_box.ts";
import type { VenueAvailability } from "./venues/call_venue.ts";
import type { EgressBudgets } from "./venues/egress_budget.ts";
import type { RateLimiter } from "./usage/rate_limiter.ts";
import type { OutboundClient } from "./outbound/outbound_client.ts";

export interface Deps {
  config: Config;
  db: Database;
  clock: Clock;
  /** Present in QA only: the clock the operator may freeze and move. */
  testClock?: TestableClock;
  venues: VenueRegistry;
  /** Each venue's request weight from this instance's egress, shared in the database with the other instances. */
  egressBudgets: EgressBudgets;
  /** QA only: base URLs of the venue simulators, whose control routes make test accounts. */
  simulatorUrls?: { venueA: string; venueB: string };
  /** Reachability of each venue as last observed by venue calls. */
  venueAvailability: VenueAvailability;
  secrets: SecretBox;
  logger: Logger;
  rateLimiter: RateLimiter;
  caches: Caches;
  /** Where requests on someone else's behalf (webhook deliveries) may go, and how their hosts resolve. */
  outbound: OutboundClient;
}

export type Actor =
  | { kind: "partner"; partnerId: string; clientId: string }
  | { kind: "operator" }
  /** The end user on a hosted page, acting within the session its ticket names. */
  | { kind: "hostedPage" }
  | { kind: "system"; job: string };

export interface Ctx extends Deps {
  actor: Actor;
  requestId: string;
  /**
   * Present when the request carries an Idempotency-Key: the verb records its
   * answer with it inside the transaction of its effect.
   */
  idempotency?: IdempotentAnswer;
}

/** How an actor is written in audit entries. */
export function actorLabel(actor: Actor): string {
  switch (actor.kind) {
    case "partner":
      return `partner:${actor.clientId}`;
    case "operator":
      return "operator";
    case "hostedPage":
      return "hosted-page";
    case "system":
      return `system:${actor.job}`;
  }
}

/** The calling partner, or a thrown error when a partner verb is reached by another actor. */
export function partnerOf(ctx: Ctx): string {
  if (ctx.actor.kind !== "partner") throw new Error("This operation needs a partner actor");
  return ctx.actor.partnerId;
}
