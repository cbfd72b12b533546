/** What the tests of the remote path (remote_test.ts, remote_pipeline_test.ts) share: a fresh sqld and small reads. */
import assert from "node:assert/strict";
import type { Database } from "../../db/client.ts";
import { settings } from "../../db/schema.ts";
import { type Sqld, startSqld } from "../_helpers/sqld.ts";

/** `test` against a sqld of its own, stopped afterwards whatever happened. */
export async function withServer(test: (sqld: Sqld) => Promise<void>): Promise<void> {
  const sqld = await startSqld();
  try {
    await test(sqld);
  } finally {
    await sqld.stop();
  }
}

/** The error `work` fails with; a test failure when it succeeds. */
export async function failureOf(work: unknown): Promise<unknown> {
  return await Promise.resolve(work).then(() => assert.fail("expected a failure"), (error: unknown) => error);
}

/** The keys of the `settings` rows, sorted: what the remote tests write and read back. */
export const keys = async (db: Database) => (await db.read.select().from(settings)).map((row) => row.key).sort();
