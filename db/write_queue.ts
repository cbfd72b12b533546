/**
 * Write transactions on the single writer connection, committed in groups.
 *
 * SQLite has one writer; queueing in process is cheaper than spinning on
 * SQLITE_BUSY. When several units of work wait, they share one transaction:
 * each runs in its own savepoint, so a unit that fails rolls back alone, and
 * one COMMIT makes all the others durable together. A unit's promise settles
 * only after that COMMIT, so a caller never sees success for a write that
 * could still be lost, and everything a unit writes (a state change and its
 * event) commits together or not at all.
 *
 * The first unit of a group runs without a savepoint (the common case is a
 * group of one); if it fails, the whole transaction, holding only its work,
 * is rolled back and the group starts afresh.
 */
import { setImmediate } from "node:timers";
import { isBusy, type SqlConnection, TransactionEnded } from "./connection.ts";

/** Units taken per group (settled or failed): bounds how long the first unit of a group waits for its commit. */
const MAX_GROUP = 64;
/**
 * Waiting for another process's write lock: backoff from 1 ms doubling to 25 ms, for at most 5 s. Another
 * process's group holds the lock for about a millisecond: a longer sleep would mostly leave it free.
 */
const LOCK_WAIT_MS = 5_000;
/**
 * Waiting in this queue for the writer: far beyond any healthy wait (a full
 * queue drains in well under a second), so reaching it means a unit of work
 * holds the writer and does not finish (e.g. it awaits something outside the
 * database). Waiters then fail loudly instead of hanging every write.
 */
export const QUEUE_WAIT_MS = 10_000;

export class WriteWaitTimeout extends Error {
  constructor(waitedMs: number) {
    super(`A write waited ${waitedMs} ms for the writer: a transaction is holding it without finishing`);
    this.name = "WriteWaitTimeout";
  }
}

interface Unit<H> {
  work: (handle: H) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When the unit fails if it is still waiting (`performance.now()`, QUEUE_WAIT_MS after it came). */
  deadline: number;
}

interface Settled {
  unit: Unit<unknown>;
  value: unknown;
}

export class WriteQueue<H> {
  #pending: Unit<H>[] = [];
  /**
   * One timer for the whole queue, due at the first pending unit's deadline:
   * units wait in order and for the same time, so the first is always the
   * earliest. (A timer per unit cost a fan-out ~4 % of its CPU.)
   */
  #waitTimer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #groups = 0;
  #units = 0;
  #lastGroupSize = 0;

  constructor(
    readonly connection: SqlConnection,
    readonly handle: H,
    readonly queueWaitMs = QUEUE_WAIT_MS,
  ) {}

  /** Run `work` in a write transaction; resolves after its commit. */
  run<T>(work: (handle: H) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({
        work,
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: performance.now() + this.queueWaitMs,
      });
      this.#armWaitTimer();
      if (!this.#running) void this.#drain();
    });
  }

  /** Fails the units whose wait is over, then waits for the next first one. */
  #armWaitTimer(): void {
    if (this.#waitTimer !== undefined || !this.#pending.length) return;
    this.#waitTimer = setTimeout(() => {
      this.#waitTimer = undefined;
      const now = performance.now();
      while (this.#pending.length && this.#pending[0].deadline <= now) {
        this.#pending.shift()!.reject(new WriteWaitTimeout(this.queueWaitMs));
      }
      this.#armWaitTimer();
    }, Math.max(0, this.#pending[0].deadline - performance.now()));
  }

  #stopWaitTimerWhenIdle(): void {
    if (this.#pending.length || this.#waitTimer === undefined) return;
    clearTimeout(this.#waitTimer);
    this.#waitTimer = undefined;
  }

  #take(): Unit<H> {
    const unit = this.#pending.shift()!;
    this.#stopWaitTimerWhenIdle();
    return unit;
  }

  #rejectAllPending(error: unknown): void {
    for (const unit of this.#pending.splice(0)) unit.reject(error);
    this.#stopWaitTimerWhenIdle();
  }

  /** Groups committed and units run so far (for the benchmark). */
  get stats(): { groups: number; units: number } {
    return { groups: this.#groups, units: this.#units };
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#pending.length) await this.#runGroup();
    } catch (error) {
      // #runGroup settles its own units; this is the last guard for anything still waiting.
      this.#rejectAllPending(error);
    } finally {
      this.#running = false;
    }
  }

  async #runGroup(): Promise<void> {
    const settled: Settled[] = [];
    // Under load (the last group had company) the group gathers for one timer turn, which lets the
    // event loop take in new requests, BEFORE taking the write lock: other processes on the database
    // keep the lock meanwhile, instead of waiting while this one holds it idle.
    if (this.#lastGroupSize > 1) await timerTurn();
    try {
      await this.#begin();
    } catch (error) {
      // Not even the lock: every waiting unit fails the same way, nothing was written.
      this.#rejectAllPending(error);
      return;
    }
    let open = true;
    let waited = false;
    let taken = 0;
    /** The unit taken off the queue and not yet settled: a failure of the transaction itself must reach it too. */
    let inHand: Unit<H> | null = null;
    try {
      while (taken < MAX_GROUP) {
        if (!this.#pending.length) {
          // The engine is synchronous, so a unit runs from BEGIN to here in one turn of the event
          // loop and nothing could join it. Let callbacks already queued run once (an immediate
          // turn, ~0.1 ms): those that write join this transaction and share its COMMIT.
          if (!open || waited) break;
          waited = true;
          await immediateTurn();
          continue;
        }
        const unit = inHand = this.#take();
        taken++;
        if (settled.length === 0) {
          try {
            settled.push({ unit: unit as Unit<unknown>, value: await unit.work(this.handle) });
            inHand = null;
          } catch (error) {
            await this.connection.rollback();
            open = false;
            inHand = null;
            unit.reject(error);
            if (this.#pending.length) {
              await this.#begin();
              open = true;
            }
          }
          continue;
        }
        // SQLite ends a transaction by itself on some errors; a SAVEPOINT then would start a new one.
        this.#assertOpen();
        const savepoint = `unit_${settled.length}`;
        await this.#savepointStatement(`SAVEPOINT ${savepoint}`);
        try {
          const value = await unit.work(this.handle);
          await this.#savepointStatement(`RELEASE ${savepoint}`);
          settled.push({ unit: unit as Unit<unknown>, value });
          inHand = null;
        } catch (error) {
          // Its failure ended the whole transaction (a full disk, a server's timeout): that, not a refused ROLLBACK TO,
          // is what every unit of the group hears.
          if (!this.connection.inTransaction()) throw error;
          await this.#savepointStatement(`ROLLBACK TO ${savepoint}`);
          await this.#savepointStatement(`RELEASE ${savepoint}`);
          inHand = null;
          unit.reject(error);
        }
      }
      if (open) {
        this.#assertOpen();
        await this.connection.commit();
      }
      open = false;
    } catch (error) {
      // The transaction itself failed (commit, savepoint, rollback): nothing of this group is durable.
      if (open) {
        try {
          await this.connection.rollback();
        } catch {
          // Already gone: what matters is that every unit hears of the failure.
        }
      }
      inHand?.reject(error);
      for (const { unit } of settled) unit.reject(error);
      return;
    }
    this.#lastGroupSize = settled.length;
    if (settled.length) {
      this.#groups++;
      this.#units += settled.length;
    }
    for (const { unit, value } of settled) unit.resolve(value);
  }

  /**
   * Savepoint statements. Nobody reads their answers: a connection that pays
   * a round trip per statement sends them with the next one, which runs only
   * if they succeeded, and a failure of theirs keeps the group from committing
   * (SqlConnection.runWithNext). Otherwise queries, which the embedded
   * connection keeps prepared (a group may hold hundreds).
   */
  async #savepointStatement(sql: string): Promise<void> {
    if (this.connection.runWithNext) this.connection.runWithNext(sql);
    else await this.connection.query(sql, [], "run");
  }

  #assertOpen(): void {
    if (!this.connection.inTransaction()) throw new TransactionEnded();
  }

  /** BEGIN IMMEDIATE, retried with backoff while another process holds the write lock. */
  async #begin(): Promise<void> {
    const deadline = performance.now() + LOCK_WAIT_MS;
    for (let delay = 1;; delay = Math.min(delay * 2, 25)) {
      try {
        await this.connection.begin();
        return;
      } catch (error) {
        if (!isBusy(error) || performance.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

/** One turn of the event loop that also polls for I/O: new requests get to run. */
function timerTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** The shortest yield: queued callbacks run, without waiting for the next I/O poll. */
function immediateTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
