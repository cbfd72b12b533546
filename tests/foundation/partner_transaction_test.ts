/**
 * A partner's write transaction re-checks its credential and partner beside
 * its work (domain/credentials/partner_transaction.ts): nothing the work
 * wrote commits unless both are still in force, and the recheck's refusal is
 * the answer, whatever the work answered. Here the revoke and the suspension
 * land after authentication, straight in the database, as one committed
 * through another path would.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { credentials, partners, settings } from "../../db/schema.ts";
import type { Ctx } from "../../domain/context.ts";
import { withPartnerTransaction } from "../../domain/credentials/partner_transaction.ts";
import { ApiError } from "../../domain/errors.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner } from "../_helpers/http.ts";

async function partnerCtx(env: TestEnv): Promise<Ctx> {
  const partner = await createPartner(env);
  return {
    ...env.deps,
    actor: { kind: "partner", partnerId: partner.partnerId, clientId: partner.clientId },
    requestId: "req_partner_transaction",
  };
}

const written = async (env: TestEnv, key: string) =>
  (await env.deps.db.read.select().from(settings).where(eq(settings.key, key))).length;

/** A work that writes first and then answers (or fails on its own): what the recheck must outrank. */
const writingWork = (key: string, failure?: Error) => async (tx: Tx) => {
  await tx.insert(settings).values({ key, value: "written by the work" });
  if (failure) throw failure;
  return "the work's answer";
};

Deno.test("partner transaction: the work's writes commit with a credential and partner in force", async () => {
  const env = await startTestEnv();
  try {
    const ctx = await partnerCtx(env);
    assert.equal(await withPartnerTransaction(ctx, writingWork("kept")), "the work's answer");
    assert.equal(await written(env, "kept"), 1);
  } finally {
    await env.close();
  }
});

Deno.test("partner transaction: a credential revoked after authentication refuses, first, and nothing commits", async () => {
  const env = await startTestEnv();
  try {
    const ctx = await partnerCtx(env);
    const { clientId } = ctx.actor as { clientId: string };
    await withTransaction(env.deps.db, (tx) =>
      tx.update(credentials).set({ revokedAt: env.clock.now() }).where(
        eq(credentials.clientId, clientId),
      ));
    for (const failure of [undefined, new ApiError("VALIDATION_ERROR")]) {
      const refusal = await withPartnerTransaction(ctx, writingWork("revoked", failure)).then(
        () => assert.fail("the write committed"),
        (error: unknown) => error,
      );
      assert.ok(refusal instanceof ApiError && refusal.code === "B2B_CREDENTIAL_INVALID", String(refusal));
      assert.equal(await written(env, "revoked"), 0, "nothing the work wrote was kept");
    }
  } finally {
    await env.close();
  }
});

Deno.test("partner transaction: a partner suspended after authentication refuses, and nothing commits", async () => {
  const env = await startTestEnv();
  try {
    const ctx = await partnerCtx(env);
    await withTransaction(env.deps.db, (tx) =>
      tx.update(partners).set({ status: "SUSPENDED" }).where(
        eq(partners.partnerId, (ctx.actor as { partnerId: string }).partnerId),
      ));
    const refusal = await withPartnerTransaction(ctx, writingWork("suspended")).catch((error: unknown) => error);
    assert.ok(refusal instanceof ApiError && refusal.code === "PRINCIPAL_NOT_ACTIVE", String(refusal));
    assert.equal(await written(env, "suspended"), 0);
  } finally {
    await env.close();
  }
});
