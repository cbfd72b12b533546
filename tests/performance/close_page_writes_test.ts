/**
 * A period close writes each page's obligations, statements and events with
 * multi-row INSERTs: the feed still reads as if each client were stated in
 * turn (its obligation.created, then its statement.created, clients in id
 * order, across pages), every statement and obligation name each other, each
 * portion is marked with its client's statement, and a pair whose obligation
 * for the period already exists gets no second one (its statement names none).
 */
import assert from "node:assert/strict";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { clients, events, obligations, performancePortions, statements } from "../../db/schema.ts";
import { contractPeriodAt, contractStart } from "../../domain/billing/periods.ts";
import { performanceFeeSource } from "../../domain/billing/fee_obligations.ts";
import type { Ctx } from "../../domain/context.ts";
import { loadContractVersions } from "../../domain/partners/load_partner.ts";
import { closePeriods } from "../../domain/performance/close_periods.ts";
import { periodReference } from "../../domain/performance/statement_writes.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner } from "../_helpers/http.ts";
import { billingContract } from "./trade_fixture.ts";

/** More than a page (100 clients), ending on a page of an odd count: chunks of 64, 32, 16, 4, 2 and 1 rows. */
const CLIENTS = 151;

Deno.test("period close: a page's rows written together read as each client stated in turn, across pages", async () => {
  const env = await startTestEnv();
  try {
    const ctx: Ctx = { ...env.deps, actor: { kind: "system", job: "test" }, requestId: "test" };
    await createPartner(env, { partnerId: "paging", contract: billingContract() });
    const now = env.clock.now();
    await withTransaction(env.deps.db, async (tx) => {
      await tx.run(sql`INSERT INTO ${clients} (partner_id, tenant_id, external_user_id, status, created_at, updated_at)
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CLIENTS})
        SELECT 'paging', 'paging', 'user-' || i, 'ACTIVE', ${now}, ${now} FROM n`);
      // Two confirmed portions a client: odd clients earn 10 USD a portion (a fee is owed), even ones lose 3.
      await tx.run(sql`INSERT INTO ${performancePortions} (client_id, provider_id, venue_ref, position_id, closed_at,
          status, realized_micros, venue_fees_micros, funding_micros, builder_fees_micros, net_micros, facts_count,
          confirmed_at)
        SELECT c.id, 'VENUE_A', 'FILL:' || c.id || '-' || k.k, 'pos-' || c.id, ${Date.parse("2026-11-10T00:00:00Z")}
          + k.k * 3600000, 'CONFIRMED', CASE c.id % 2 WHEN 1 THEN 10000000 ELSE -3000000 END, 0, 0, 0,
          CASE c.id % 2 WHEN 1 THEN 10000000 ELSE -3000000 END, 2, ${now}
        FROM ${clients} c, (SELECT 0 AS k UNION ALL SELECT 1) k WHERE c.partner_id = 'paging'`);
    });
    const ids = (await env.deps.db.read.select({ id: clients.id }).from(clients)
      .where(eq(clients.partnerId, "paging")).orderBy(asc(clients.id))).map((row) => row.id);
    const owing = ids.filter((id) => id % 2 === 1);
    // The period's obligation of one owing client exists already (written by a close cut short, say).
    const versions = await loadContractVersions(env.deps.db.read, "paging");
    const period = contractPeriodAt(versions, contractStart(versions));
    const held = owing[40];
    await withTransaction(env.deps.db, (tx) =>
      tx.insert(obligations).values({
        obligationId: "obl_held",
        partnerId: "paging",
        clientId: held,
        providerId: "VENUE_A",
        source: performanceFeeSource("MONTHLY"),
        reference: periodReference(period),
        amountMicros: 4_000_000,
        currency: "USDT",
        status: "OPEN",
        dueAt: period.end,
        graceUntil: period.end,
        statementId: null,
        createdAt: now,
      }));

    env.clock.freeze(period.end + 60_000);
    const summary = await closePeriods(ctx);
    assert.equal(summary.statements, CLIENTS);
    assert.equal(summary.obligations, owing.length - 1);

    const stated = await env.deps.db.read.select().from(statements).where(eq(statements.partnerId, "paging"));
    const statementOf = new Map(stated.map((row) => [row.clientId, row]));
    const feed = await env.deps.db.read.select().from(events)
      .where(
        and(eq(events.partnerId, "paging"), inArray(events.eventType, ["statement.created", "obligation.created"])),
      )
      .orderBy(asc(events.seq));
    const expected = ids.flatMap((id) => {
      const statement = statementOf.get(id)!;
      const created = [`statement.created ${id} ${statement.statementId}`];
      return id % 2 === 1 && id !== held ? [`obligation.created ${id} ${statement.obligationId}`, ...created] : created;
    });
    const userIds = new Map(ids.map((id, index) => [`user-${index + 1}`, id]));
    assert.deepEqual(
      feed.map((event) => {
        const id = userIds.get(event.externalUserId!);
        const data = event.data as { statementId?: string; obligationId: string };
        return `${event.eventType} ${id} ${
          event.eventType === "statement.created" ? data.statementId : data.obligationId
        }`;
      }),
      expected,
    );

    const owed = await env.deps.db.read.select().from(obligations).where(eq(obligations.partnerId, "paging"));
    for (const obligation of owed) {
      if (obligation.obligationId === "obl_held") {
        assert.equal(obligation.statementId, null, "the obligation held is left as it was");
        continue;
      }
      const statement = statementOf.get(obligation.clientId)!;
      assert.equal(obligation.statementId, statement.statementId);
      assert.equal(statement.obligationId, obligation.obligationId);
      assert.equal(obligation.amountMicros, 4_000_000, "20 % of 20 USD");
    }
    assert.equal(statementOf.get(held)!.obligationId, null, "no second obligation for the held one's period");
    assert.equal(statementOf.get(held)!.feeMicros, 4_000_000);

    const portions = await env.deps.db.read.select({
      clientId: performancePortions.clientId,
      statementId: performancePortions.statementId,
    }).from(performancePortions);
    assert.equal(portions.length, CLIENTS * 2);
    for (const portion of portions) {
      assert.equal(portion.statementId, statementOf.get(portion.clientId)!.statementId);
    }
  } finally {
    await env.close();
  }
});
