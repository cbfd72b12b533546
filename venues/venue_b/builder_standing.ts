/**
 * The platform builder's standing at the venue: builder fees accrue only to a
 * builder address in standard mode (HL docs, trading/account-abstraction-modes).
 * In any other mode fills still happen and carry the fee, but nothing reaches
 * the builder, so the service must not open paid entries through it.
 *
 * The mode is read with `userAbstraction` (weight 20) and kept for
 * BUILDER_MODE_TTL_MS (`fresh` reads anew); concurrent callers share the read in flight. A failed
 * read answers the last known mode while one exists, else it throws.
 */
import type { BuilderStanding, HexAddress } from "../types.ts";
import { BUILDER_MODE_TTL_MS } from "./constants.ts";
import type { WireUserAbstraction } from "./wire.ts";

/** Standard mode: "default" (never set) and "disabled" (set back to standard). */
const STANDARD_MODES: ReadonlySet<WireUserAbstraction> = new Set(["default", "disabled"]);

/** Whether builder fees accrue to a builder in `mode`. */
export function accruesBuilderFees(mode: WireUserAbstraction): boolean {
  return STANDARD_MODES.has(mode);
}

/** A per-adapter cache of builders' modes, read through `readMode`. */
export function builderStandingReader(
  readMode: (builder: HexAddress) => Promise<WireUserAbstraction>,
  now: () => number,
): (builder: HexAddress, options?: { fresh?: boolean }) => Promise<BuilderStanding> {
  const known = new Map<string, { mode: WireUserAbstraction; readAt: number }>();
  const inFlight = new Map<string, Promise<WireUserAbstraction>>();
  return async (builder, options = {}) => {
    const key = builder.toLowerCase();
    const cached = known.get(key);
    if (cached && !options.fresh && now() - cached.readAt < BUILDER_MODE_TTL_MS) return standing(cached.mode);
    let read = inFlight.get(key);
    if (!read) {
      read = readMode(key as HexAddress).finally(() => inFlight.delete(key));
      inFlight.set(key, read);
    }
    try {
      const mode = await read;
      known.set(key, { mode, readAt: now() });
      return standing(mode);
    } catch (error) {
      if (cached) return standing(cached.mode);
      throw error;
    }
  };
}

function standing(mode: WireUserAbstraction): BuilderStanding {
  return { mode, accruesFees: accruesBuilderFees(mode) };
}
