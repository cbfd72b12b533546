/**
 * Keeping every reconcilable account on its venue's pushes, so a fill, a
 * fired stop or a funding payment is read within seconds of happening
 * instead of at the next pass of the reconcile job, which at the venues'
 * published request budgets reaches each of thousands of accounts only every
 * few hours.
 *
 * One instance of the fleet keeps the pushes (the `account-pushes` service
 * lease): the venues limit connections, streams and watched users per IP,
 * and two keepers would spend those limits twice. The keeper opens a watch
 * per account (the adapter multiplexes them), and on every push reconciles
 * that account, a few at a time, through the same step as the reconcile job.
 * A push names what changed but is never taken as the fact: the fact is read,
 * so a lost or repeated push costs a delay, never a wrong record; reads wait
 * for the egress's request budget rather than be refused, and a read that
 * could not be done is tried again at the next round.
 *
 * Whether and since when each account's pushes flow is recorded in
 * `account_pushes`, with the keeper's lease owner (push_states.ts). The
 * keeper only listens and reads what pushes name; the reconcile job polls the
 * account until one of its reads covers the gap before the pushes began to
 * flow (anything then may have been missed), records it live, and from then
 * leaves it to its pushes, sweeping it only when its last read is older than
 * the sweep interval. A watch that drops (`onLost`), a keeper that dies or
 * goes silent (its rows stop counting) or an account beyond what the venue
 * will push (the adapter reports it lost) falls back to the job's polling:
 * never to blindness.
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountPushes, intents, providerAccounts } from "../../db/schema.ts";
import { wallClockNow } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { errorFields } from "../logger.ts";
import { type AccountRow, credentialsOf } from "../accounts/load_account.ts";
import { holdServiceLease, releaseServiceLease } from "../jobs/service_leases.ts";
import type { AccountPush, AccountWatch, OrderStatus, ProviderId, PushCoverage } from "../../venues/types.ts";
import { waitingForBudget } from "../venues/egress_budget.ts";
import { newLeaseOwner } from "./entry_leases.ts";
import {
  isReconcilable,
  orReadFailure,
  readAccountOnce,
  reconcilable,
  reconcileAccountOnce,
} from "./reconcile_accounts.ts";
import { readFunding, readNamedSymbols, WHOLE_READ_NEEDED } from "./pushed_reads.ts";
import { PUSH_KEEPER_LEASE, PUSH_KEEPER_LEASE_MS } from "./push_states.ts";

const TICK_MS = 5_000;
/** A read of what a push named done later than this after the push is logged (the target is 5 s at p99). */
const LATE_NEWS_MS = 5_000;
/** Accounts read at once per venue on pushes: enough to keep up with a burst, few enough to leave room to the API. */
const CONCURRENT_READS = 4;
/** Of those, funding reads (a payment reaches every holder of a market at once): the rest stay free for news. */
const CONCURRENT_FUNDING = 2;

interface Kept {
  account: AccountRow;
  watch: AccountWatch;
}

export class AccountPushKeeper {
  readonly #ctx: Ctx;
  readonly #owner = newLeaseOwner();
  /** By account id: each account's row as watched (a changed row is watched anew) and its watch. */
  readonly #kept = new Map<string, Kept>();
  /** Accounts a push brought news of (an order, a trade) since their last read, by account id: read first. */
  readonly #news = new Map<string, Due>();
  /** Accounts a funding payment was pushed for and nothing else, by account id: read when no news waits. */
  readonly #funding = new Map<string, Due>();
  /** Funding reads under way, by account id. */
  readonly #readingFunding = new Set<string>();
  /**
   * Venues whose minute was found down to the share left to news by a funding
   * read about to start: no other starts there before the next round.
   */
  readonly #fundingPaused = new Set<string>();
  /**
   * Accounts whose read could not be done now (an entry was at work there,
   * the venue or this egress's budget refused): tried again at the next round.
   */
  readonly #deferred = new Map<string, Due>();
  /** Reads under way, by account id: a stop waits for them before the database may close. */
  readonly #reading = new Map<string, Promise<void>>();
  /** Push states not yet written, by account id: since when pushes flow (null: they do not) and what they cover. */
  readonly #states = new Map<string, { flowingSince: number | null } & PushCoverage>();
  #leader = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #ticking: Promise<void> | null = null;
  #stopped = false;
  /** Settles when the keeper stops: a read still waiting for budget gives up at once. */
  readonly #stopping = Promise.withResolvers<void>();
  /** Aborted when the keeper stops: a read waiting for its budget mid-way gives up at once. */
  readonly #stopSignal = new AbortController();

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), TICK_MS);
    this.tick();
  }

  /** One round: hold or seek the lease, watch exactly the reconcilable accounts, record what changed. */
  tick(): Promise<void> {
    this.#ticking ??= this.#round().catch((error) =>
      this.#ctx.logger.error("account pushes: round failed", errorFields(error))
    ).finally(() => this.#ticking = null);
    return this.#ticking;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopping.resolve();
    this.#stopSignal.abort();
    clearInterval(this.#timer);
    await this.#ticking;
    await Promise.all(this.#reading.values());
    await this.#closeAll();
    if (this.#leader) await releaseServiceLease(this.#ctx.db, PUSH_KEEPER_LEASE, this.#owner);
    this.#leader = false;
  }

  async #round(): Promise<void> {
    if (this.#stopped) return;
    const leader = await holdServiceLease(this.#ctx.db, PUSH_KEEPER_LEASE, this.#owner, PUSH_KEEPER_LEASE_MS);
    if (!leader) {
      if (this.#leader) this.#ctx.logger.warn("account pushes: the keeper's lease went to another instance");
      this.#leader = false;
      await this.#closeAll();
      return;
    }
    if (!this.#leader) await this.#takeOver();
    this.#leader = true;
    await this.#watchReconcilableAccounts();
    await this.#writeStates();
    this.#fundingPaused.clear();
    for (const [accountId, due] of this.#deferred) this.#markDue(accountId, due);
    this.#deferred.clear();
    this.#readDue();
  }

  /** A new keeper's first round: rows another keeper wrote stop counting as live at once, not when read. */
  async #takeOver(): Promise<void> {
    await withTransaction(
      this.#ctx.db,
      (tx) =>
        tx.update(accountPushes).set({ live: false, flowingSince: null, owner: this.#owner, changedAt: wallClockNow() })
          .where(ne(accountPushes.owner, this.#owner)),
    );
  }

  async #watchReconcilableAccounts(): Promise<void> {
    const rows = (await this.#ctx.db.read.select().from(providerAccounts).where(reconcilable))
      .filter(isReconcilable);
    const current = new Map(rows.map((row) => [row.accountId, row]));
    for (const [accountId, kept] of this.#kept) {
      const row = current.get(accountId);
      // Gone, or changed (new credential, revoked): the old watch ends; a changed row is watched anew below.
      if (!row || row.updatedAt !== kept.account.updatedAt) await this.#unwatch(accountId);
    }
    for (const row of rows) if (!this.#kept.has(row.accountId)) this.#watch(row);
  }

  #watch(account: AccountRow): void {
    const venue = this.#ctx.venues[account.providerId as ProviderId];
    if (!venue.watchAccount) return;
    const accountId = account.accountId;
    const watch = venue.watchAccount(credentialsOf(account), {
      onPush: (push) => this.#markDue(accountId, { pushes: [push] }),
      // Recorded live only once a read of the reconcile job has covered the gap: until then it keeps polling it.
      onLive: (coverage) => this.#states.set(accountId, { flowingSince: wallClockNow(), ...coverage }),
      onLost: (reason) => {
        this.#states.set(accountId, { flowingSince: null, orders: false, funding: false });
        this.#ctx.logger.info("account pushes: lost", { accountId, reason });
      },
    });
    this.#kept.set(accountId, { account, watch });
  }

  async #unwatch(accountId: string): Promise<void> {
    const kept = this.#kept.get(accountId);
    if (!kept) return;
    this.#kept.delete(accountId);
    this.#news.delete(accountId);
    this.#funding.delete(accountId);
    this.#deferred.delete(accountId);
    this.#states.set(accountId, { flowingSince: null, orders: false, funding: false });
    await kept.watch.close().catch((error) =>
      this.#ctx.logger.warn("account pushes: closing a watch failed", { accountId, ...errorFields(error) })
    );
  }

  async #closeAll(): Promise<void> {
    for (const accountId of [...this.#kept.keys()]) await this.#unwatch(accountId);
    await this.#writeStates();
  }

  /** Written in one transaction per round; a state still unwritten when the keeper dies dies with its lease. */
  async #writeStates(): Promise<void> {
    if (!this.#states.size || !this.#leader) return;
    const changes = [...this.#states];
    this.#states.clear();
    const byId = new Map(
      (await this.#ctx.db.read.select({
        accountId: providerAccounts.accountId,
        clientId: providerAccounts.clientId,
        providerId: providerAccounts.providerId,
      }).from(providerAccounts).where(inArray(providerAccounts.accountId, changes.map(([id]) => id))))
        .map((row) => [row.accountId, row]),
    );
    const now = wallClockNow();
    await withTransaction(this.#ctx.db, async (tx) => {
      for (const [accountId, state] of changes) {
        const key = byId.get(accountId);
        if (!key) continue;
        const row = {
          clientId: key.clientId,
          providerId: key.providerId,
          owner: this.#owner,
          live: false,
          flowingSince: state.flowingSince,
          coversOrders: state.orders,
          coversFunding: state.funding,
          changedAt: now,
        };
        await tx.insert(accountPushes).values(row)
          .onConflictDoUpdate({ target: [accountPushes.clientId, accountPushes.providerId], set: row });
      }
    });
  }

  #markDue(accountId: string, due: Due): void {
    if (this.#stopped) return;
    const pushes = [...this.#news.get(accountId)?.pushes ?? [], ...this.#funding.get(accountId)?.pushes ?? []];
    this.#news.delete(accountId);
    this.#funding.delete(accountId);
    const merged = { pushes: [...pushes, ...due.pushes] };
    (hasNews(merged) ? this.#news : this.#funding).set(accountId, merged);
    this.#readDue();
  }

  /**
   * Starts reads up to each venue's concurrency (a venue whose budget is
   * spent, with its reads waiting for it, never holds up the other's):
   * accounts a push brought news of first, then funding payments, which
   * never take the last slots; each read that ends starts the next.
   */
  #readDue(): void {
    if (this.#stopped) return;
    for (const [accountId, due] of this.#news) {
      const providerId = this.#kept.get(accountId)?.account.providerId;
      if (this.#reading.has(accountId) || this.#readingAt(providerId, this.#reading) >= CONCURRENT_READS) continue;
      this.#news.delete(accountId);
      this.#start(accountId, due);
    }
    for (const [accountId, due] of this.#funding) {
      const providerId = this.#kept.get(accountId)?.account.providerId;
      if (
        this.#reading.has(accountId) || this.#fundingPaused.has(providerId!) ||
        this.#readingAt(providerId, this.#reading) >= CONCURRENT_READS ||
        this.#readingAt(providerId, this.#readingFunding) >= CONCURRENT_FUNDING
      ) continue;
      this.#funding.delete(accountId);
      this.#readingFunding.add(accountId);
      this.#start(accountId, due);
    }
  }

  /** How many of `reads` (account ids) are at `providerId`. */
  #readingAt(providerId: string | undefined, reads: Map<string, unknown> | Set<string>): number {
    let count = 0;
    for (const accountId of reads.keys()) if (this.#kept.get(accountId)?.account.providerId === providerId) count++;
    return count;
  }

  #start(accountId: string, due: Due): void {
    const kept = this.#kept.get(accountId);
    if (!kept) {
      this.#readingFunding.delete(accountId);
      return;
    }
    // News waits for the budget mid-way; a funding read does not (it would hold back the account's own news).
    const read = hasNews(due)
      ? waitingForBudget(this.#stopSignal.signal, () => this.#read(kept.account, due))
      : this.#read(kept.account, due);
    this.#reading.set(
      accountId,
      read.finally(() => {
        this.#reading.delete(accountId);
        this.#readingFunding.delete(accountId);
        this.#readDue();
      }),
    );
  }

  /**
   * Reads what the pushes named (pushed_reads.ts), the account whole when
   * that cannot judge it. Pushes that only echo the service's own orders (an
   * entry's fill, a stop it placed) need nothing. A funding read does not
   * start while the minute's budget is down to the share left to news (nor
   * does any other at that venue before the next round): it never holds a
   * slot, or the account's own news, waiting for room.
   */
  async #read(account: AccountRow, due: Due): Promise<void> {
    const budget = this.#ctx.egressBudgets[account.providerId as ProviderId];
    try {
      const named = await newsIn(this.#ctx, account, due.pushes);
      const news = named.whole || named.symbols.length > 0;
      if (!news && !named.funding) return;
      if (!news && !(await budget.backgroundMayGoOn())) {
        this.#fundingPaused.add(account.providerId);
        this.#deferred.set(account.accountId, due);
        return;
      }
      // Waits while this egress's budget for the venue is spent, so reads are paced rather than refused.
      await Promise.race([budget.reserve(1), this.#stopping.promise]);
      if (this.#stopped) return;
      let outcome: unknown = named.whole ? WHOLE_READ_NEEDED : "NOTHING";
      if (!named.whole && named.symbols.length) {
        outcome = await readAccountOnce(
          this.#ctx,
          account,
          this.#owner,
          (lease) => readNamedSymbols(this.#ctx, account, named.symbols, lease),
        );
      }
      const outcomes = [outcome];
      if (named.funding && !named.whole) outcomes.push(await orReadFailure(() => readFunding(this.#ctx, account)));
      if (outcomes.includes(WHOLE_READ_NEEDED)) {
        outcomes.push(await reconcileAccountOnce(this.#ctx, account, this.#owner));
      }
      // An entry at work settles the account itself; a refused read is tried again: both at the next round.
      const deferred = outcomes.some((outcome) =>
        outcome === "BUSY" || outcome === "UNAVAILABLE" || outcome === "FAILED"
      );
      if (deferred) this.#deferred.set(account.accountId, due);
      // What a push named is meant to be known within seconds: the operator sees the reads that were not, and why.
      const pushedAt = Math.min(...due.pushes.filter((push) => push.kind !== "FUNDING").map((push) => push.at));
      if (news && (deferred || wallClockNow() - pushedAt > LATE_NEWS_MS)) {
        this.#ctx.logger.warn("account pushes: news read late or deferred", {
          accountId: account.accountId,
          providerId: account.providerId,
          sincePushMs: wallClockNow() - pushedAt,
          outcomes: outcomes.map((outcome) => typeof outcome === "string" ? outcome : "READ").join(","),
        });
      }
    } catch (error) {
      this.#ctx.logger.error("account pushes: reading an account failed", {
        accountId: account.accountId,
        ...errorFields(error),
      });
    }
  }
}

interface Due {
  pushes: AccountPush[];
}

/** Whether a push may bring news of an order or a trade (or more): read before funding payments. */
function hasNews(due: Due): boolean {
  return due.pushes.some((push) => push.kind !== "FUNDING");
}

/** The intent statuses a pushed order status means: a push naming an intent in one of them tells nothing new. */
const KNOWN_AS: Record<OrderStatus, string[]> = {
  NEW: ["ACCEPTED"],
  TRIGGER_PENDING: ["ACCEPTED"],
  PARTIALLY_FILLED: ["PARTIALLY_FILLED"],
  FILLED: ["FILLED"],
  CANCELED: ["CANCELED"],
  EXPIRED: ["EXPIRED"],
  REJECTED: ["REJECTED"],
};

/**
 * What the pushes name beyond echoes of what the service already recorded
 * (an order of its own whose intent already has the pushed status: the entry
 * it just sent and saw filled, the stop it just placed): the symbols of
 * other order changes and trades (a resting target's fill, a fired stop),
 * whether funding was paid, whether anything else changed (`whole`).
 */
async function newsIn(ctx: Ctx, account: AccountRow, pushes: AccountPush[]) {
  const symbols = new Set<string>();
  let funding = false;
  let whole = false;
  for (const push of pushes) {
    if (push.kind === "FUNDING") funding = true;
    else if (push.kind === "ACCOUNT") whole = true;
    else if (push.kind === "TRADE" || !(await isEcho(ctx, account, push))) symbols.add(push.symbol);
  }
  return { symbols: [...symbols], funding, whole };
}

async function isEcho(ctx: Ctx, account: AccountRow, push: AccountPush & { kind: "ORDER" }): Promise<boolean> {
  if (!push.clientOrderId) return false;
  const [intent] = await ctx.db.read.select({ status: intents.status }).from(intents).where(and(
    eq(intents.providerId, account.providerId),
    eq(intents.clientId, account.clientId),
    eq(intents.clientOrderId, push.clientOrderId),
  ));
  return intent !== undefined && KNOWN_AS[push.status].includes(intent.status);
}
