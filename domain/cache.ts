/**
 * A tiny read-through cache with a short time-to-live, for data read on every
 * request that changes rarely (credentials, provider settings). Writers in this
 * process clear it after they commit, so their changes apply at once; a change
 * made by another process (another instance, the operator CLI) bumps the
 * cache's generation in the database, and each request clears what moved
 * before its first read (domain/cache_generations.ts). Writes never trust it:
 * each re-checks what authorizes it inside its own transaction
 * (domain/credentials/partner_transaction.ts).
 *
 * Expiry uses the monotonic clock, not the business clock: it is about
 * freshness of a copy, not about time in the product.
 */
import type { Market, ProviderId } from "../venues/types.ts";
import { CacheGenerations } from "./cache_generations.ts";
import type { RealExecution } from "./catalog/provider_settings.ts";
import type { CredentialRecord } from "./credentials/authenticate_partner.ts";
import type { PartnerSnapshot } from "./grants/effective_access.ts";

export class TtlCache<V> {
  #entries = new Map<string, { value: V; until: number }>();
  /**
   * Counts `clear()` calls. A load that began before a clear may have read
   * the old row; keeping its result would bring back what the clear removed.
   */
  #generation = 0;
  #loading = new Map<string, Promise<V | null>>();

  constructor(readonly ttlMs: number, readonly maxEntries = 10_000) {}

  /**
   * The cached value, or `load()`'s; a null result is not kept (so new rows
   * are seen at once). Callers that miss together share one load.
   */
  get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const hit = this.#entries.get(key);
    if (hit && hit.until > performance.now()) return Promise.resolve(hit.value);
    let loading = this.#loading.get(key);
    if (!loading) {
      loading = this.#load(key, load).finally(() => this.#loading.delete(key));
      this.#loading.set(key, loading);
    }
    return loading;
  }

  async #load(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const generation = this.#generation;
    const value = await load();
    if (value === null || generation !== this.#generation) return value;
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    this.#entries.set(key, { value, until: performance.now() + this.ttlMs });
    return value;
  }

  clear(): void {
    this.#entries.clear();
    this.#loading.clear();
    this.#generation++;
  }
}

/** The caches a running service keeps; cleared by the verbs that change what they hold. */
export interface Caches {
  /** Credential rows with their partner's status and limits, by clientId. */
  credentials: TtlCache<CredentialRecord>;
  /** Partner, contract versions, restrictions and published strategies, by partnerId. */
  partners: TtlCache<PartnerSnapshot>;
  /** Real-execution flags by provider. */
  providerSettings: TtlCache<Record<ProviderId, RealExecution>>;
  /** Each venue's market rules (tick, step, minimums) by provider: they change on the venue's schedule, not ours. */
  markets: TtlCache<Market[]>;
  /** Clears the shared caches (all but markets) when another instance's write moved their generation. */
  generations: CacheGenerations;
}

export function createCaches(): Caches {
  const shared = {
    credentials: new TtlCache<CredentialRecord>(2_000),
    partners: new TtlCache<PartnerSnapshot>(2_000),
    providerSettings: new TtlCache<Record<ProviderId, RealExecution>>(2_000),
  };
  return {
    ...shared,
    markets: new TtlCache(60_000),
    generations: new CacheGenerations(shared),
  };
}
