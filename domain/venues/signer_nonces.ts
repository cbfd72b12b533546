/**
 * VENUE_B agent nonces allocated from the database, so every instance signing
 * for one agent draws from one strictly increasing sequence: one conditional
 * upsert per action, `last_nonce = max(last_nonce + 1, now)`, answering the
 * value it wrote. It goes through the write queue, so the nonce is committed
 * before the action is signed: a crash after it never issues it again.
 *
 * Nonces run on the wall clock (the venue's window is real time, never the
 * QA test clock).
 */
import { sql } from "drizzle-orm";
import { type Database, preparedFor, withTransaction } from "../../db/client.ts";
import { signerNonces } from "../../db/schema.ts";
import type { HexAddress } from "../../venues/types.ts";
import type { SignerNonces } from "../../venues/venue_b/nonces.ts";
import { wallClockNow } from "../clock.ts";

const allocate = preparedFor((db) =>
  db.insert(signerNonces)
    .values({ signer: sql`${sql.placeholder("signer")}`, lastNonce: sql`${sql.placeholder("now")}` })
    .onConflictDoUpdate({
      target: signerNonces.signer,
      set: { lastNonce: sql`max(${signerNonces.lastNonce} + 1, excluded.last_nonce)` },
    })
    .returning({ nonce: signerNonces.lastNonce })
    .prepare()
);

export function databaseSignerNonces(db: Database, now: () => number = wallClockNow): SignerNonces {
  return {
    async next(signer: HexAddress): Promise<number> {
      const row = await withTransaction(db, async (tx) =>
        // The time is read when the write runs, not when it was queued: the nonce is as fresh as it can be.
        await allocate(tx).get({ signer: signer.toLowerCase(), now: now() }));
      return row!.nonce;
    },
  };
}
