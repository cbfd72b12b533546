/**
 * Who may act, as the venue decides it (facts §10 steps 4-5): the recovered
 * signer resolved to the account it acts for, and the per-signer nonce rules.
 */
import type { HexAddress } from "../../types.ts";
import type { Signature } from "../../venue_b/signing.ts";
import { fail, integer, record } from "./canonical.ts";
import { findUser, isFunded, liveAgent, type SimState, type SimUser } from "./state.ts";

const NONCE_SET_SIZE = 100;
const DAY_MS = 86_400_000;
/** Refusals kept for the control route: the latest ones. */
const REFUSALS_KEPT = 100;

/** The `{r, s, v}` of an envelope; r and s may come without zero padding. */
export function parseSignature(raw: unknown): Signature {
  const signature = record(raw, "signature");
  const part = (value: unknown, what: string) => {
    if (typeof value !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(value)) fail(`${what}: expected hex`);
    return value as HexAddress;
  };
  return { r: part(signature.r, "r"), s: part(signature.s, "s"), v: integer(signature.v, "v") };
}

/**
 * Who an L1 action acts for: an agent the venue holds acts for its master,
 * a funded wallet for itself. Under REJECT_KEYS every agent is a stranger.
 */
export function resolveL1Actor(state: SimState, signer: HexAddress): SimUser | string {
  const agent = liveAgent(state, signer);
  if (agent && state.faults.mode !== "REJECT_KEYS") {
    const master = findUser(state, agent.user);
    if (master) return master;
  }
  const user = findUser(state, signer);
  if (user && !agent) return isFunded(state, user) ? user : `Must deposit before performing actions. User: ${signer}`;
  return `User or API Wallet ${signer} does not exist.`;
}

/** User-signed actions move funds or permissions: only the funded wallet itself may sign them. */
export function resolveUserSigner(state: SimState, signer: HexAddress): SimUser | string {
  const user = findUser(state, signer);
  return isFunded(state, user) ? user : `Must deposit before performing actions. User: ${signer}`;
}

/**
 * The venue's nonce rules, per signer: inside (now - 2 days, now + 1 day),
 * never seen, and above the smallest of the 100 highest seen. Records it when
 * accepted. Returns the refusal text otherwise.
 */
export function acceptNonce(state: SimState, signer: HexAddress, nonce: number): string | null {
  const refusal = nonceRefusal(state, signer, nonce);
  const checks = state.nonceChecks;
  if (refusal) {
    checks.refused++;
    checks.refusals.push({ signer, nonce, reason: refusal });
    if (checks.refusals.length > REFUSALS_KEPT) checks.refusals.shift();
    return refusal;
  }
  checks.accepted++;
  const seen = state.nonces.get(signer) ?? [];
  seen.push(nonce);
  seen.sort((a, b) => a - b);
  if (seen.length > NONCE_SET_SIZE) seen.shift();
  state.nonces.set(signer, seen);
  return null;
}

/**
 * The venue's texts name the nonce and, when it is out of bounds, the bound
 * it missed (as quoted from the venue: "Invalid nonce: duplicate nonce
 * 1741107452532", "Invalid nonce: nonce too low <nonce> < <bound>", "...
 * nonce too high <nonce> > <bound>"). The bounds printed here are the
 * nearest nonce that would have passed, and the oldest nonce kept.
 */
function nonceRefusal(state: SimState, signer: HexAddress, nonce: number): string | null {
  const now = state.now();
  if (nonce <= now - 2 * DAY_MS) return `Invalid nonce: nonce too low ${nonce} < ${now - 2 * DAY_MS + 1}`;
  if (nonce >= now + DAY_MS) return `Invalid nonce: nonce too high ${nonce} > ${now + DAY_MS - 1}`;
  const seen = state.nonces.get(signer) ?? [];
  if (seen.includes(nonce)) return `Invalid nonce: duplicate nonce ${nonce}`;
  if (seen.length >= NONCE_SET_SIZE && nonce < seen[0]) return `Invalid nonce: nonce too low ${nonce} < ${seen[0]}`;
  return null;
}
