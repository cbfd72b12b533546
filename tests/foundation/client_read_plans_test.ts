/**
 * The polled reads of one client (status, commercial) reach its obligations
 * through the client's own index, as SQLite plans them with no statistics
 * (nothing runs ANALYZE). The planner's own choice for `status = 'OPEN' AND
 * due_at <= ?` was `obligations_open_due`, which walks every due obligation
 * of every client: each poll then costs what the whole platform owes.
 */
import assert from "node:assert/strict";
import type { Ctx } from "../../domain/context.ts";
import { getClientCommercial, getClientStatus } from "../../domain/clients/client_reads.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import { recordingReader } from "../_helpers/query_plans.ts";

Deno.test("a client's status and commercial reads find its obligations through the client's index", async () => {
  const env = await startTestEnv();
  const recording = recordingReader(env.databaseUrl);
  try {
    const partner = await createPartner(env);
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "plans-1" },
        headers: { "idempotency-key": "plans-client-1" },
      }),
      201,
    );
    const ctx: Ctx = {
      ...env.deps,
      db: { ...env.deps.db, read: recording.read },
      actor: { kind: "partner", partnerId: partner.partnerId, clientId: partner.clientId },
      requestId: "plans",
    };
    await getClientStatus({ ctx, input: { externalUserId: "plans-1" } });
    await getClientCommercial({ ctx, input: { externalUserId: "plans-1" } });

    const obligationPlans = (await recording.plans()).flatMap(({ plan }) =>
      plan.filter((detail) => /\bobligations\b/.test(detail))
    );
    assert.equal(obligationPlans.length, 2, `both reads look at obligations:\n${obligationPlans.join("\n")}`);
    for (const detail of obligationPlans) assert.match(detail, /USING INDEX obligations_client \(client_id=\?\)/);
  } finally {
    recording.close();
    await env.close();
  }
});
