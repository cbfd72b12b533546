/**
 * A client is created only by an active partner, checked inside the create's
 * own transaction: a second instance whose credential cache still holds the
 * partner as ACTIVE must not create a client after a suspension.
 */
import { startTestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, operator } from "../_helpers/http.ts";

Deno.test("POST /v1/users on another instance refuses a partner suspended moments ago", async () => {
  const first = await startTestEnv();
  const second = await startTestEnv({ databaseUrl: first.databaseUrl });
  try {
    const partner = await createPartner(first);
    const elsewhere = asPartner(second, partner.partnerId, partner.clientId, partner.clientSecret);
    const create = (id: string) =>
      elsewhere.call("POST", "/v1/users", {
        body: { externalUserId: id },
        headers: { "idempotency-key": `key-${id}` },
      });
    // The second instance authenticates the partner once: its cache now holds it as ACTIVE.
    await expectJson(await create("before-suspension"), 201);
    await expectJson(
      await operator(first, "POST", `/operator/v1/partners/${partner.partnerId}/suspend`, {
        reason: "contrato em revisão",
      }),
      200,
    );
    await expectError(await create("after-suspension"), 403, "PRINCIPAL_NOT_ACTIVE");
  } finally {
    await second.close();
    await first.close();
  }
});
