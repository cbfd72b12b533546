/**
 * Before anything reads the in-process caches: one read of the cache
 * generations, clearing the copies another instance's write made stale
 * (domain/cache_generations.ts). The venue simulators mounted in QA read no
 * cache and skip it.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";

export function freshCaches(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.req.path.startsWith("/sim/")) {
      const { caches, db } = c.get("deps");
      await caches.generations.refresh(db.read);
    }
    await next();
  };
}
