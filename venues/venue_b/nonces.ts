/**
 * Nonces of the signers the service itself signs with: the agent keys that
 * sign every L1 action. The venue keeps, per signer, the 100 highest nonces it
 * accepted and refuses a nonce it has seen, one not above the smallest of
 * those 100, or one outside (now - 2 days, now + 1 day). Several instances
 * signing for one agent must therefore draw from one source; the service's
 * composition root injects one kept in the database (domain/venues/signer_nonces.ts).
 *
 * User-signed actions (approveAgent, approveBuilderFee, sends) are signed by
 * the client's own wallet with the nonce built into the action: they never
 * draw from here.
 */
import type { HexAddress } from "../types.ts";

/** Where an agent's next nonce comes from. */
export interface SignerNonces {
  /**
   * A millisecond-time nonce strictly above every nonce issued before for
   * `signer` (lowercase or not: one signer) by every user of this source.
   */
  next(signer: HexAddress): Promise<number>;
}

/** Signers remembered before the stale ones (whose last nonce the clock has passed) are dropped. */
const MAX_REMEMBERED = 10_000;

/**
 * Nonces kept in this process only: right for one process alone (the venue
 * unit tests against a simulator, a benchmark's adapter), wrong for several
 * instances signing for the same agents, which could issue the same nonce.
 */
export function inProcessSignerNonces(now: () => number = Date.now): SignerNonces {
  const last = new Map<string, number>();
  return {
    next(signer) {
      const key = signer.toLowerCase();
      const time = now();
      if (last.size > MAX_REMEMBERED) {
        for (const [stale, nonce] of last) if (time > nonce) last.delete(stale);
      }
      const nonce = Math.max(time, (last.get(key) ?? 0) + 1);
      last.set(key, nonce);
      return Promise.resolve(nonce);
    },
  };
}
