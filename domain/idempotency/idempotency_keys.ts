/**
 * Idempotency keys for the mutations the spec marks IK, scoped per partner and
 * route (method + concrete path).
 *
 * A key is claimed IN_PROGRESS with a lease before the work starts and
 * completed with the stored response after; a key whose lease ran out (the
 * process died mid-request) can be claimed again, so no key is stuck forever.
 * Outcomes that say "try again" (5xx, rate limit, a busy account) are not
 * stored: the key is released so the same request can be retried with it.
 */
import { and, eq, lt } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import { idempotencyKeys } from "../../db/schema.ts";
import { DAY_MS, MINUTE_MS } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../ids.ts";

export const KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;
const LEASE_MS = 2 * MINUTE_MS;
const RETENTION_MS = DAY_MS;

export interface KeyScope {
  partnerId: string;
  route: string;
  key: string;
}

export type Claim = { kind: "claimed" } | { kind: "replay"; status: number; body: string };

export function requestHash(body: unknown): string {
  return sha256Hex(canonicalJson(body ?? null));
}

/** JSON with object keys sorted at every depth: the same body always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

function whereScope(scope: KeyScope) {
  return and(
    eq(idempotencyKeys.partnerId, scope.partnerId),
    eq(idempotencyKeys.route, scope.route),
    eq(idempotencyKeys.key, scope.key),
  );
}

export async function claimKey(db: Database, scope: KeyScope, hash: string, now: number): Promise<Claim> {
  return await withTransaction(db, async (tx) => {
    const [row] = await tx.select().from(idempotencyKeys).where(whereScope(scope));
    if (row && row.expiresAt > now) {
      if (row.requestHash !== hash) throw new ApiError("IDEMPOTENCY_CONFLICT");
      if (row.state === "DONE") return { kind: "replay", status: row.responseStatus!, body: row.responseBody! };
      if (row.lockedUntil > now) throw new ApiError("IDEMPOTENCY_IN_PROGRESS");
      // The request that held the key died without finishing: take it over.
      await tx.update(idempotencyKeys).set({ lockedUntil: now + LEASE_MS }).where(whereScope(scope));
      return { kind: "claimed" };
    }
    if (row) await tx.delete(idempotencyKeys).where(whereScope(scope));
    await tx.insert(idempotencyKeys).values({
      ...scope,
      requestHash: hash,
      state: "IN_PROGRESS",
      lockedUntil: now + LEASE_MS,
      createdAt: now,
      expiresAt: now + RETENTION_MS,
    });
    return { kind: "claimed" };
  });
}

export async function completeKey(db: Database, scope: KeyScope, status: number, body: string): Promise<void> {
  await withTransaction(db, async (tx) => {
    await tx.update(idempotencyKeys).set({ state: "DONE", responseStatus: status, responseBody: body })
      .where(whereScope(scope));
  });
}

export async function releaseKey(db: Database, scope: KeyScope): Promise<void> {
  await withTransaction(db, async (tx) => {
    await tx.delete(idempotencyKeys).where(whereScope(scope));
  });
}

/** Whether an answer is final for its key, or one the caller may retry with the same key. */
export function isStorableOutcome(status: number, code: string | undefined): boolean {
  if (status >= 500 || status === 429) return false;
  return code !== "ACCOUNT_BUSY" && code !== "IDEMPOTENCY_IN_PROGRESS";
}

/** Expiry job: drop keys past their retention. */
export async function purgeExpiredKeys(db: Database, now: number): Promise<number> {
  return await withTransaction(db, async (tx) => {
    const purged = await tx.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now))
      .returning({ key: idempotencyKeys.key });
    return purged.length;
  });
}
