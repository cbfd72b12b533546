/**
 * Writes re-check their authorization inside their own transaction. A second
 * instance whose caches still hold the credential and the partner as they
 * were must refuse the very next write after a revoke or a suspension
 * committed through the first instance; its reads may lag by the cache TTL.
 */
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";

/** Every partner write route built so far, each a valid request on its own. */
function writes(partner: TestPartner, externalUserId: string) {
  return [
    (id: string) =>
      partner.call("POST", "/v1/users", { body: { externalUserId: id }, headers: { "idempotency-key": `key-${id}` } }),
    () => partner.call("POST", `/v1/users/${externalUserId}/suspend`, { body: { reason: "pausa pedida" } }),
    () => partner.call("PUT", `/v1/users/${externalUserId}/strategies`, { body: { strategyIds: null } }),
    () =>
      partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: { providers: null, reason: "ajuste de teste" },
      }),
  ];
}

async function twoInstances(run: (first: TestEnv, second: TestEnv) => Promise<void>) {
  const first = await startTestEnv();
  const second = await startTestEnv({ databaseUrl: first.databaseUrl });
  try {
    await run(first, second);
  } finally {
    await second.close();
    await first.close();
  }
}

/** Authenticate on the second instance once, so its caches hold the credential and partner as they are now. */
async function warmUp(elsewhere: TestPartner, externalUserId: string) {
  await expectJson(
    await elsewhere.call("POST", "/v1/users", {
      body: { externalUserId },
      headers: { "idempotency-key": `key-${externalUserId}` },
    }),
    201,
  );
  await expectJson(await elsewhere.call("GET", `/v1/users/${externalUserId}`), 200);
}

Deno.test("every write on another instance refuses a partner suspended moments ago", async () => {
  await twoInstances(async (first, second) => {
    const partner = await createPartner(first);
    const elsewhere = asPartner(second, partner.partnerId, partner.clientId, partner.clientSecret);
    await warmUp(elsewhere, "warm-user");
    await expectJson(
      await operator(first, "POST", `/operator/v1/partners/${partner.partnerId}/suspend`, {
        reason: "contrato em revisão",
      }),
      200,
    );
    for (const [i, write] of writes(elsewhere, "warm-user").entries()) {
      await expectError(await write(`after-suspension-${i}`), 403, "PRINCIPAL_NOT_ACTIVE");
    }
  });
});

Deno.test("every write on another instance refuses a credential revoked moments ago", async () => {
  await twoInstances(async (first, second) => {
    const partner = await createPartner(first);
    const elsewhere = asPartner(second, partner.partnerId, partner.clientId, partner.clientSecret);
    await warmUp(elsewhere, "warm-user");
    await expectJson(
      await operator(first, "DELETE", `/operator/v1/partners/${partner.partnerId}/credentials/${partner.clientId}`),
      200,
    );
    for (const [i, write] of writes(elsewhere, "warm-user").entries()) {
      await expectError(await write(`after-revoke-${i}`), 401, "B2B_CREDENTIAL_INVALID");
    }
    // On the instance that revoked, reads stop at once too (its cache was cleared).
    const here = asPartner(first, partner.partnerId, partner.clientId, partner.clientSecret);
    await expectError(await here.call("GET", "/v1/users/warm-user"), 401, "B2B_CREDENTIAL_INVALID");
  });
});
