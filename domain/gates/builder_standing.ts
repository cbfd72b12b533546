/**
 * Gate 9's reading of the platform builder at the venue. Builder fees accrue
 * only to a builder address in standard mode (VENUE_B docs, account
 * abstraction modes): in any other mode paid openings still fill but the
 * platform earns nothing from them. The spec's gate 9 wants the builder
 * configuration valid, so such a builder is an invalid configuration: paid
 * openings are refused BUILDER_CONFIG_INVALID (fail closed) until the
 * operator sets the builder back to standard mode.
 *
 * The adapter keeps the mode for a minute (BUILDER_MODE_TTL_MS); the
 * operator's view and the start-up check ask for a fresh read, which also
 * refreshes what the gates judge with.
 */
import type { Ctx } from "../context.ts";
import { type HexAddress, type ProviderId, VenueError } from "../../venues/types.ts";

/** The builder's mode and whether fees accrue there; null when the venue could not tell us. */
export interface BuilderStandingView {
  address: HexAddress;
  mode: string | null;
  accruesFees: boolean | null;
}

/** What gate 9 is built from at `providerId`; nothing at a venue without builder fees. */
export async function builderSourcesOf(
  ctx: Pick<Ctx, "venues" | "config">,
  providerId: ProviderId,
): Promise<{ builderBeneficiary?: string | null; builderAccruesFees?: boolean | null }> {
  if (!ctx.venues[providerId].capabilities.builderFee) return {};
  const standing = await builderStandingOf(ctx, providerId);
  return { builderBeneficiary: ctx.config.venueBBuilderAddress, builderAccruesFees: standing?.accruesFees ?? null };
}

/** The platform builder's standing at a builder-fee venue; null elsewhere. */
export async function builderStandingOf(
  ctx: Pick<Ctx, "venues" | "config">,
  providerId: ProviderId,
  options: { fresh?: boolean } = {},
): Promise<BuilderStandingView | null> {
  const venue = ctx.venues[providerId];
  if (!venue.capabilities.builderFee) return null;
  const address = ctx.config.venueBBuilderAddress;
  // A venue that does not tell a builder's mode apart has nothing to check.
  if (!venue.getBuilderStanding) return { address, mode: null, accruesFees: true };
  try {
    const standing = await venue.getBuilderStanding(address, options);
    return { address, mode: standing.mode, accruesFees: standing.accruesFees };
  } catch (error) {
    if (!(error instanceof VenueError)) throw error;
    return { address, mode: null, accruesFees: null };
  }
}

/**
 * At start: one fresh read per builder-fee venue, a warning the operator sees
 * when the builder would earn nothing (or could not be read). Never throws:
 * the service starts either way, and gate 9 keeps paid entries closed.
 */
export async function warnOnBuilderStanding(ctx: Pick<Ctx, "venues" | "config" | "logger">): Promise<void> {
  for (const providerId of Object.keys(ctx.venues) as ProviderId[]) {
    try {
      const standing = await builderStandingOf(ctx, providerId, { fresh: true });
      if (!standing || standing.accruesFees) continue;
      ctx.logger.warn(
        standing.accruesFees === false
          ? "builder not in standard mode at the venue: builder fees will not accrue, paid entries are refused " +
            "(gate 9 BUILDER_CONFIG_INVALID) until it is set back to standard"
          : "builder mode could not be read at the venue: paid entries wait for a reading (gate 9)",
        { providerId, builder: standing.address, mode: standing.mode },
      );
    } catch (error) {
      ctx.logger.warn("builder mode check failed", { providerId, error: String(error) });
    }
  }
}

/** What the operator sees of a builder: fees accrue, do not, or the venue could not say (paid openings refused). */
export type BuilderStatus = "ACCRUING" | "NOT_ACCRUING" | "UNKNOWN";

export function builderStatusOf(accruesFees: boolean | null): BuilderStatus {
  return accruesFees === true ? "ACCRUING" : accruesFees === false ? "NOT_ACCRUING" : "UNKNOWN";
}
