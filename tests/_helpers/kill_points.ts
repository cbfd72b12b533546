/**
 * Deterministic crashes, for recovery tests. A process killed between two
 * awaits has done, outside itself, exactly what it did before the next
 * effect it would have had: a venue call that acts on the account, or a
 * write transaction. So every crash of a flow is one of its kill points:
 * before a write commits, or before (or just after) a venue mutation, the
 * venue having acted and the answer being lost with the process. Here one
 * such point throws `ProcessKilled`; nothing the flow would do after it
 * runs, the database keeps what was committed, the venue what it was sent.
 * A test then recovers as a restarted service would: the jobs, on the same
 * database and the same venue.
 *
 * Unlike a real kill, `finally` blocks still run (an entry lease is released
 * rather than left to run out), which only spares the test the lease's wait.
 */
import type { Database } from "../../db/client.ts";
import type { TestEnv } from "./env.ts";
import type { ProviderId, VenueAdapter } from "../../venues/types.ts";

export class ProcessKilled extends Error {
  constructor(point: string) {
    super(`The process was killed ${point}`);
    this.name = "ProcessKilled";
  }
}

/** The venue methods that act on an account: where a kill may leave something half done. */
export const MUTATIONS = [
  "placeOrder",
  "placeProtection",
  "placeProtections",
  "cancelOrder",
  "cancelProtection",
] as const satisfies readonly (keyof VenueAdapter)[];

export type Mutation = (typeof MUTATIONS)[number];

export interface KillPoint {
  /** A venue mutation, or a write transaction of the service's database. */
  at: Mutation | "write";
  /** 1 for the first such call once armed. */
  nth: number;
  /** "before": it never happens; "after" (venue calls only): the venue acted, its answer is lost. */
  when: "before" | "after";
}

export const describeKill = (point: KillPoint) => `${point.when} ${point.at} #${point.nth}`;

type Call = (...args: unknown[]) => Promise<unknown>;

/**
 * Route the service's venue mutations and write transactions through `hook`,
 * which decides per call (its kind and its rank among its kind).
 */
function intercept(
  env: TestEnv,
  providerId: ProviderId,
  hook: (at: KillPoint["at"], nth: number, run: () => Promise<unknown>) => Promise<unknown>,
) {
  const venue = env.deps.venues[providerId];
  const db = env.deps.db;
  const seen = new Map<KillPoint["at"], number>();
  const next = (at: KillPoint["at"]) => {
    const nth = (seen.get(at) ?? 0) + 1;
    seen.set(at, nth);
    return nth;
  };
  const wrapped = Object.create(venue) as VenueAdapter;
  for (const method of MUTATIONS) {
    const real = venue[method] as Call | undefined;
    if (!real) continue;
    Object.defineProperty(wrapped, method, {
      value: (...args: unknown[]) => hook(method, next(method), () => real.apply(venue, args)),
    });
  }
  const writes = {
    run: (work: Parameters<Database["writes"]["run"]>[0]) => hook("write", next("write"), () => db.writes.run(work)),
  } as unknown as Database["writes"];
  env.deps.venues[providerId] = wrapped;
  env.deps.db = { ...db, writes };
  return () => {
    env.deps.venues[providerId] = venue;
    env.deps.db = db;
  };
}

/** Record the kill points of a flow: run it between `spyKillPoints` and `points()`. */
export function spyKillPoints(env: TestEnv, providerId: ProviderId = "VENUE_A") {
  const calls: [KillPoint["at"], number][] = [];
  const restore = intercept(env, providerId, (at, nth, run) => {
    calls.push([at, nth]);
    return run();
  });
  return {
    /** Every kill point of the calls seen: before each, and after each venue mutation. */
    points(): KillPoint[] {
      restore();
      return calls.flatMap(([at, nth]) => [
        { at, nth, when: "before" as const },
        ...(at === "write" ? [] : [{ at, nth, when: "after" as const }]),
      ]);
    },
  };
}

/** Arm a kill at `point`; `restart()` gives the service its venue and database back (the new process). */
export function armKill(env: TestEnv, point: KillPoint, providerId: ProviderId = "VENUE_A") {
  let fired = false;
  const restore = intercept(env, providerId, async (at, nth, run) => {
    if (fired || at !== point.at || nth !== point.nth) return await run();
    fired = true;
    // The venue acted (or refused); whichever, the process is gone before it sees the answer.
    if (point.when === "after") await run().catch(() => {});
    throw new ProcessKilled(describeKill(point));
  });
  return {
    get fired() {
      return fired;
    },
    restart: restore,
  };
}
