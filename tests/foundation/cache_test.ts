import assert from "node:assert/strict";
import { TtlCache } from "../../domain/cache.ts";

Deno.test("a load that began before clear() is answered once but never kept", async () => {
  const cache = new TtlCache<string>(60_000);
  let stored = "ACTIVE";
  let release!: () => void;
  const slowRead = cache.get("partner", async () => {
    const seen = stored; // the row as read before the change commits
    await new Promise<void>((resolve) => (release = resolve));
    return seen;
  });
  stored = "SUSPENDED";
  cache.clear(); // the writer's invalidation, after its commit
  release();
  assert.equal(await slowRead, "ACTIVE", "the request that was already reading sees what it read");
  assert.equal(await cache.get("partner", () => Promise.resolve(stored)), "SUSPENDED", "the old value was not kept");
});

Deno.test("values stay cached within the TTL and null results are not kept", async () => {
  const cache = new TtlCache<number>(60_000);
  let loads = 0;
  const load = () => Promise.resolve(++loads);
  assert.equal(await cache.get("k", load), 1);
  assert.equal(await cache.get("k", load), 1);
  assert.equal(await cache.get("missing", () => Promise.resolve(null)), null);
  assert.equal(await cache.get("missing", load), 2);
});
