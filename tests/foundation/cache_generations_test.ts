/**
 * Two instances over one database file: a change committed on one applies to
 * the other's next request, not after its cache's TTL. The second instance's
 * caches are given a ten-minute TTL, so only the generation read can explain
 * a refusal.
 */
import assert from "node:assert/strict";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import { type Db, withTransaction } from "../../db/client.ts";
import * as schema from "../../db/schema.ts";
import { type Caches, createCaches, TtlCache } from "../../domain/cache.ts";
import { bumpCacheGenerations, CacheGenerations } from "../../domain/cache_generations.ts";
import { authenticatePartner } from "../../domain/credentials/authenticate_partner.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, operator } from "../_helpers/http.ts";

const TEN_MINUTES = 600_000;

/** The service's caches, but kept ten minutes instead of two seconds. */
function longLivedCaches(): Caches {
  const shared = {
    credentials: new TtlCache<never>(TEN_MINUTES),
    partners: new TtlCache<never>(TEN_MINUTES),
    providerSettings: new TtlCache<never>(TEN_MINUTES),
  };
  return { ...shared, markets: new TtlCache(TEN_MINUTES), generations: new CacheGenerations(shared) } as Caches;
}

async function twoInstances(engine?: "client"): Promise<[TestEnv, TestEnv]> {
  const first = await startTestEnv();
  const second = await startTestEnv({ databaseUrl: first.databaseUrl, engine });
  second.deps.caches = longLivedCaches();
  return [first, second];
}

for (const engine of [undefined, "client"] as const) {
  Deno.test(`a credential revoked on one instance is refused by the other on its next request (${engine ?? "embedded"})`, async () => {
    const [first, second] = await twoInstances(engine);
    try {
      const partner = await createPartner(first);
      const twin = asPartner(second, partner.partnerId, partner.clientId, partner.clientSecret);
      await expectJson(await twin.call("GET", "/v1/health"), 200); // now cached on the second instance
      await expectJson(
        await operator(first, "DELETE", `/operator/v1/partners/${partner.partnerId}/credentials/${partner.clientId}`),
        200,
      );
      // The second instance's copy is still there: read without the generation check, it would let the caller in.
      const stale = await authenticatePartner(second.deps.db.read, second.deps.caches, partner, second.clock.now());
      assert.equal(stale.clientId, partner.clientId);
      // Its next request reads the generations first and is refused.
      await expectError(await twin.call("GET", "/v1/health"), 401, "B2B_CREDENTIAL_INVALID");
    } finally {
      await second.close();
      await first.close();
    }
  });
}

Deno.test("a partner suspended on one instance is refused by the other at once, and reactivated likewise", async () => {
  const [first, second] = await twoInstances();
  try {
    const partner = await createPartner(first);
    const twin = asPartner(second, partner.partnerId, partner.clientId, partner.clientSecret);
    await expectJson(await twin.call("GET", "/v1/tenants"), 200);
    await expectJson(await operator(first, "POST", `/operator/v1/partners/${partner.partnerId}/suspend`, {}), 200);
    await expectError(await twin.call("GET", "/v1/tenants"), 403, "PRINCIPAL_NOT_ACTIVE");
    await expectJson(await operator(first, "POST", `/operator/v1/partners/${partner.partnerId}/reactivate`, {}), 200);
    await expectJson(await twin.call("GET", "/v1/tenants"), 200);
  } finally {
    await second.close();
    await first.close();
  }
});

Deno.test("a bump clears only the caches it names, on the next refresh; markets stay on their TTL", async () => {
  const env = await startTestEnv();
  try {
    const caches = createCaches();
    const loads: Record<string, number> = { credentials: 0, partners: 0, markets: 0 };
    const read = async () => {
      await caches.generations.refresh(env.deps.db.read);
      await caches.credentials.get("c", () => Promise.resolve(++loads.credentials as never));
      await caches.partners.get("p", () => Promise.resolve(++loads.partners as never));
      await caches.markets.get("VENUE_A", () => Promise.resolve([] as never[]).finally(() => loads.markets++));
    };
    await read();
    await read();
    assert.deepEqual(loads, { credentials: 1, partners: 1, markets: 1 }, "cached between refreshes that saw no move");
    await withTransaction(env.deps.db, (tx) => bumpCacheGenerations(tx, "credentials"));
    await read();
    assert.deepEqual(loads, { credentials: 2, partners: 1, markets: 1 });
    // A write that rolls back moves nothing.
    await assert.rejects(withTransaction(env.deps.db, async (tx) => {
      await bumpCacheGenerations(tx, "partners");
      throw new Error("rolled back");
    }));
    await read();
    assert.deepEqual(loads, { credentials: 2, partners: 1, markets: 1 });
  } finally {
    await env.close();
  }
});

Deno.test("callers arriving before a generation read begins share it; one arriving after it began gets the next", async () => {
  // A database that answers after 20 ms, as a remote libSQL server does: the sum moves on every read.
  let statements = 0;
  let sum = 0;
  const remote = drizzle(async (query, _params, method) => {
    statements++;
    const answer = query.includes("total(") ? ++sum : JSON.stringify({ partners: sum });
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { rows: method === "get" ? [answer] : [[answer]] };
  }, { schema }) as unknown as Db;
  let clears = 0;
  const counting = { clear: () => clears++ };
  const generations = new CacheGenerations({ credentials: counting, partners: counting, providerSettings: counting });
  const together = Array.from({ length: 11 }, () => generations.refresh(remote));
  // The shared read has begun: a caller from now on may have come after a change it did not see.
  while (statements === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  const late = generations.refresh(remote);
  await Promise.all([...together, late]);
  assert.equal(statements, 4, "two reads (sum and generations each): one for the eleven, one for the late caller");
  assert.equal(sum, 2);
  assert.ok(clears > 0);
  await generations.refresh(remote);
  assert.equal(statements, 6, "a caller after them reads again");
});
