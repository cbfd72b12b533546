/**
 * Idempotency keys for the mutations the spec marks IK, scoped per partner and
 * route (method + concrete path).
 *
 * The answer to a mutation is stored in the same transaction as its effect
 * (`IdempotentAnswer.record`): a crash can never leave an effect without its
 * stored answer, or an answer without its effect. The record is checked under
 * the write lock, so when two requests with one key race (two instances, or a
 * retry beside a slow first try) exactly one effect commits; the other rolls
 * back and replays the winner's answer.
 *
 * Verbs whose effect lies outside the database (a venue call) claim the key
 * first (`claim`, see key_lease.ts): an owner token and a renewed lease keep
 * a second request from running beside a live one.
 *
 * Answers that changed nothing (refusals) are stored after the fact, in a
 * transaction of their own. Only outcomes where nothing happened and that say
 * "try again" (5xx, rate limit, a busy account) release the key, so the same
 * request may retry with it. An uncertain outcome (a venue call whose answer
 * was lost) is final for its key: retrying it could act twice.
 */
import { and, eq, lt, sql } from "drizzle-orm";
import { type Database, type Executor, preparedFor, type Tx, withTransaction } from "../../db/client.ts";
import { idempotencyKeys } from "../../db/schema.ts";
import { DAY_MS, wallClockNow } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../ids.ts";
import { KeyLease, LEASE_MS } from "./key_lease.ts";

export const KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;
export const RETENTION_MS = DAY_MS;

export interface KeyScope {
  partnerId: string;
  route: string;
  key: string;
}

export interface StoredAnswer {
  status: number;
  body: string;
}

export type KeyRow = typeof idempotencyKeys.$inferSelect;

export function requestHash(body: unknown): string {
  return sha256Hex(canonicalJson(body ?? null));
}

/** JSON with object keys sorted at every depth: the same body always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

const keyRow = preparedFor((db) =>
  db.select().from(idempotencyKeys).where(and(
    eq(idempotencyKeys.partnerId, sql.placeholder("partnerId")),
    eq(idempotencyKeys.route, sql.placeholder("route")),
    eq(idempotencyKeys.key, sql.placeholder("key")),
  )).prepare()
);

/** The key's row while it is within its retention, else null. */
export async function findKey(db: Executor, scope: KeyScope, now: number): Promise<KeyRow | null> {
  const row = await keyRow(db).get({ ...scope });
  return row && row.expiresAt > now ? row : null;
}

/**
 * What an existing row means for a new request carrying `hash`: the stored
 * answer to replay, or a refusal. Null when the request may run.
 */
export function answerFromRow(row: KeyRow | null, hash: string): StoredAnswer | null {
  if (!row) return null;
  if (row.requestHash !== hash) throw new ApiError("IDEMPOTENCY_CONFLICT");
  if (row.state === "DONE") return { status: row.responseStatus!, body: row.responseBody! };
  // Leases are wall-clock time (see key_lease.ts).
  if (row.lockedUntil > wallClockNow()) throw new ApiError("IDEMPOTENCY_IN_PROGRESS");
  // The request that held the key died without finishing: this one may take it over.
  return null;
}

/**
 * Insert the answer, or overwrite a row no live request holds (one whose
 * retention or lease ran out). Returns the key when it wrote, nothing when a
 * live answer or claim is in the way.
 */
const saveAnswer = preparedFor((db) =>
  db.insert(idempotencyKeys).values({
    partnerId: sql.placeholder("partnerId"),
    route: sql.placeholder("route"),
    key: sql.placeholder("key"),
    requestHash: sql.placeholder("requestHash"),
    state: "DONE",
    lockedUntil: sql.placeholder("now"),
    responseStatus: sql.placeholder("status"),
    responseBody: sql.placeholder("body"),
    createdAt: sql.placeholder("now"),
    expiresAt: sql.placeholder("expiresAt"),
  }).onConflictDoUpdate({
    target: [idempotencyKeys.partnerId, idempotencyKeys.route, idempotencyKeys.key],
    set: {
      requestHash: sql`excluded.request_hash`,
      state: "DONE",
      lockedUntil: sql`excluded.locked_until`,
      responseStatus: sql`excluded.response_status`,
      responseBody: sql`excluded.response_body`,
      createdAt: sql`excluded.created_at`,
      expiresAt: sql`excluded.expires_at`,
    },
    setWhere: sql`${idempotencyKeys.expiresAt} <= excluded.created_at OR (${idempotencyKeys.state} <> 'DONE'
      AND ${idempotencyKeys.lockedUntil} <= ${sql.placeholder("wallNow")})`,
  }).returning({ key: idempotencyKeys.key }).prepare()
);

/**
 * Another request holds the key (its answer, or its live claim); nothing of
 * this one was kept. `row` is what holds it now (null if it was just released).
 */
export class AnsweredMeanwhile extends Error {
  constructor(readonly row: KeyRow | null) {
    super("The idempotency key was answered by another request");
  }
}

/**
 * Store `answer` for the key in the caller's transaction, unless a live
 * answer is already there (then throw AnsweredMeanwhile, rolling the caller's
 * effect back). Runs under the write lock, so the check and the write are one.
 */
async function storeAnswer(tx: Tx, scope: KeyScope, hash: string, answer: StoredAnswer, now: number) {
  const saved = await saveAnswer(tx).get({
    ...scope,
    requestHash: hash,
    ...answer,
    now,
    wallNow: wallClockNow(),
    expiresAt: now + RETENTION_MS,
  });
  if (!saved) throw new AnsweredMeanwhile(await findKey(tx, scope, now));
}

/**
 * The answer of one idempotent request. The route supplies `encode` (how an
 * output becomes the HTTP answer); the domain verb calls `record` inside the
 * transaction of its effect, after `claim` if that effect is outside the
 * database.
 */
export class IdempotentAnswer {
  #encode: ((output: unknown) => StoredAnswer) | null = null;
  #lease: KeyLease | null = null;
  /**
   * The answer stored for the key: committed with this request's effect, or
   * the one it replays because another request answered first.
   */
  stored: StoredAnswer | null = null;

  constructor(
    readonly db: Database,
    readonly scope: KeyScope,
    readonly hash: string,
    readonly now: number,
    readonly leaseMs = LEASE_MS,
  ) {}

  encodeWith(encode: (output: unknown) => StoredAnswer): void {
    this.#encode = encode;
  }

  /**
   * Hold the key before an effect outside the database: a second request
   * with it is told to wait (or replays) instead of acting beside this one.
   */
  async claim(): Promise<void> {
    this.#lease ??= await KeyLease.take(this.db, this.scope, this.hash, this.now, this.leaseMs);
  }

  async record(tx: Tx, output: unknown): Promise<void> {
    if (!this.#encode) throw new Error("An idempotent answer needs the route's encoder before it is recorded");
    const answer = this.#encode(output);
    await this.#store(tx, answer);
    // Visible to the route only if the transaction commits; a rollback rethrows past it.
    this.stored = answer;
  }

  /**
   * Store an answer that was not recorded with an effect (a refusal, which
   * changed nothing, or an uncertain outcome), in a transaction of its own.
   */
  async storeAfterwards(stored: StoredAnswer): Promise<void> {
    try {
      await withTransaction(this.db, (tx) => this.#store(tx, stored));
    } catch (error) {
      // Another request answered first, or took over a lease this one let lapse: its answer stands.
      if (!(error instanceof AnsweredMeanwhile)) throw error;
    }
  }

  /** Nothing happened: a claimed key is free again for a retry (an unclaimed one was never written). */
  async release(): Promise<void> {
    await this.#lease?.release();
  }

  /** The request is over: stop renewing a claim it still holds. */
  endLease(): void {
    this.#lease?.stop();
  }

  #store(tx: Tx, answer: StoredAnswer): Promise<void> {
    return this.#lease
      ? this.#lease.complete(tx, answer, this.now)
      : storeAnswer(tx, this.scope, this.hash, answer, this.now);
  }
}

/** Whether an answer is final for its key, or one the caller may retry with the same key. */
export function isStorableOutcome(status: number, code: string | undefined): boolean {
  if (status >= 500 || status === 429) return false;
  return code !== "ACCOUNT_BUSY" && code !== "IDEMPOTENCY_IN_PROGRESS";
}

/** Expiry job: drop keys past their retention. */
export async function purgeExpiredKeys(db: Database, now: number): Promise<number> {
  return await withTransaction(db, async (tx) => {
    const purged = await tx.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now))
      .returning({ key: idempotencyKeys.key });
    return purged.length;
  });
}
