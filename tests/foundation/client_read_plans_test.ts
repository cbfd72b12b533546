/**
 * The polled reads of one client (status, commercial) reach its obligations
 * through the client's own index, as SQLite plans them with no statistics
 * (nothing runs ANALYZE). The planner's own choice for `status = 'OPEN' AND
 * due_at <= ?` was `obligations_open_due`, which walks every due obligation
 * of every client: each poll then costs what the whole platform owes.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import { clientConnection } from "../../db/client_connection.ts";
import type { SqlParam } from "../../db/connection.ts";
import * as schema from "../../db/schema.ts";
import type { Ctx } from "../../domain/context.ts";
import { getClientCommercial, getClientStatus } from "../../domain/clients/client_reads.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";

Deno.test("a client's status and commercial reads find its obligations through the client's index", async () => {
  const env = await startTestEnv();
  const client = createClient({ url: env.databaseUrl });
  try {
    const partner = await createPartner(env);
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "plans-1" },
        headers: { "idempotency-key": "plans-client-1" },
      }),
      201,
    );
    const connection = clientConnection(client);
    const statements: { sql: string; params: SqlParam[] }[] = [];
    const recording = drizzle((sql, params, method) => {
      statements.push({ sql, params: params as SqlParam[] });
      return connection.query(sql, params as SqlParam[], method) as never;
    }, { schema });
    const ctx: Ctx = {
      ...env.deps,
      db: { ...env.deps.db, read: recording },
      actor: { kind: "partner", partnerId: partner.partnerId, clientId: partner.clientId },
      requestId: "plans",
    };
    await getClientStatus({ ctx, input: { externalUserId: "plans-1" } });
    await getClientCommercial({ ctx, input: { externalUserId: "plans-1" } });

    const obligationPlans: string[] = [];
    for (const { sql, params } of statements) {
      const plan = (await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never })).rows
        .map((row) => String(row.detail));
      obligationPlans.push(...plan.filter((detail) => /\bobligations\b/.test(detail)));
    }
    assert.equal(obligationPlans.length, 2, `both reads look at obligations:\n${obligationPlans.join("\n")}`);
    for (const detail of obligationPlans) assert.match(detail, /USING INDEX obligations_client \(client_id=\?\)/);
  } finally {
    client.close();
    await env.close();
  }
});
