/**
 * Issuing a partner credential. The secret is 32 random bytes, returned once
 * and stored only as its SHA-256: with that much entropy a fast hash is as safe
 * as a slow KDF and keeps authentication cheap on every request.
 *
 * Rotation: the partner's other live credentials stay valid until the overlap
 * window ends, so the partner can deploy the new pair without downtime.
 */
import { and, eq, gt, isNull, or } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { credentials } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { type Ctx } from "../context.ts";
import { recordChange } from "../events/record_change.ts";
import { randomSecret, randomToken, sha256Hex } from "../ids.ts";
import { loadPartner } from "../partners/load_partner.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

export const DEFAULT_OVERLAP_SECONDS = 24 * 60 * 60;

export interface IssuedCredential {
  clientId: string;
  clientSecret: string;
}

export async function issueCredential(
  { ctx, tx, input }: { ctx: Ctx; tx: Tx; input: { partnerId: string; overlapSeconds?: number } },
): Promise<IssuedCredential> {
  const now = ctx.clock.now();
  await loadPartner(tx, input.partnerId);
  const overlapEnd = now + (input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000;
  // Shorten (never lengthen) the life of the credentials this one replaces.
  const live = await tx.select().from(credentials).where(and(
    eq(credentials.partnerId, input.partnerId),
    isNull(credentials.revokedAt),
    or(isNull(credentials.expiresAt), gt(credentials.expiresAt, now)),
  ));
  for (const old of live) {
    const expiresAt = Math.min(old.expiresAt ?? Infinity, overlapEnd);
    await tx.update(credentials).set({ expiresAt }).where(eq(credentials.clientId, old.clientId));
  }
  if (live.length) await bumpCacheGenerations(tx, "credentials");
  const issued = { clientId: `cli_${randomToken(24)}`, clientSecret: `csk_${randomSecret(32)}` };
  await tx.insert(credentials).values({
    clientId: issued.clientId,
    partnerId: input.partnerId,
    secretHash: sha256Hex(issued.clientSecret),
    createdAt: now,
  });
  await recordChange(ctx, tx, {
    partnerId: input.partnerId,
    action: "credential.issued",
    after: { clientId: issued.clientId, replaced: live.map((c) => c.clientId), overlapEndsAt: iso(overlapEnd) },
    at: now,
    event: {
      type: "credential.issued",
      data: {
        clientId: issued.clientId,
        replaced: live.map((c) => ({
          clientId: c.clientId,
          validUntil: iso(Math.min(c.expiresAt ?? Infinity, overlapEnd)),
        })),
      },
    },
  });
  return issued;
}

/** Rotation (operator): a new credential in its own transaction; cached credentials are dropped after commit. */
export async function rotateCredential(
  { ctx, input }: { ctx: Ctx; input: { partnerId: string; overlapSeconds?: number } },
): Promise<IssuedCredential> {
  const issued = await withTransaction(ctx.db, (tx) => issueCredential({ ctx, tx, input }));
  ctx.caches.credentials.clear();
  return issued;
}
