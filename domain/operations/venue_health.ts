/**
 * The venues as this instance sees them, without calling them: reachability
 * as venue calls last observed it, the egress's request weight counted
 * against its limit now, and at builder-fee venues the platform builder's
 * mode from the adapter's one-minute cache (a poll reads the venue at most
 * once a minute, the same read gate 9 uses, and waits for it at most
 * BUILDER_READ_WAIT_MS).
 */
import type { Ctx } from "../context.ts";
import {
  builderStandingOf,
  type BuilderStandingView,
  type BuilderStatus,
  builderStatusOf,
} from "../gates/builder_standing.ts";
import { PROVIDER_IDS, type ProviderId } from "../../venues/types.ts";

/** A health answer does not wait longer than this for a builder read the cache could not serve. */
export const BUILDER_READ_WAIT_MS = 2_000;

export interface VenueHealth {
  providerId: ProviderId;
  availability: "AVAILABLE" | "UNAVAILABLE";
  budget: { egress: string; usedThisMinute: number; limitPerMinute: number };
}

export interface BuilderHealth extends BuilderStandingView {
  providerId: ProviderId;
  status: BuilderStatus;
}

export async function venuesHealth(ctx: Ctx): Promise<VenueHealth[]> {
  const venues: VenueHealth[] = [];
  for (const providerId of PROVIDER_IDS) {
    const budget = ctx.egressBudgets[providerId];
    venues.push({
      providerId,
      availability: ctx.venueAvailability.status(providerId),
      budget: {
        egress: budget.egress,
        usedThisMinute: await budget.usedInCountedMinute(ctx.db.read),
        limitPerMinute: budget.perMinute,
      },
    });
  }
  return venues;
}

/** Builder-fee venues only; UNKNOWN when the venue could not tell, or did not within BUILDER_READ_WAIT_MS. */
export async function buildersHealth(ctx: Ctx): Promise<BuilderHealth[]> {
  const builders: BuilderHealth[] = [];
  for (const providerId of PROVIDER_IDS) {
    if (!ctx.venues[providerId].capabilities.builderFee) continue;
    const address = ctx.config.venueBBuilderAddress;
    const unknown: BuilderStandingView = { address, mode: null, accruesFees: null };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const standing = await Promise.race([
      builderStandingOf(ctx, providerId),
      new Promise<BuilderStandingView>((resolve) => timer = setTimeout(() => resolve(unknown), BUILDER_READ_WAIT_MS)),
    ]).finally(() => clearTimeout(timer)) ?? unknown;
    builders.push({
      providerId,
      ...standing,
      status: builderStatusOf(standing.accruesFees),
    });
  }
  return builders;
}
