/**
 * Deposit invoices: each gets an address of its own, derived from the
 * operator's extended public key for the network (`PUT
 * /operator/v1/deposit-xpub/:networkId`) at the next unused index
 * (non-hardened `<xpub>/0/<index>`). Only public derivation happens here: the
 * operator keeps the private key and sweeps the deposits elsewhere.
 */
import { HDKey } from "@scure/bip32";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { and, eq, sql } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { depositXpubCounters, depositXpubs, payments } from "../../db/schema.ts";
import { actorLabel, type Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";

/** The operator's key, checked to be an extended public key that derives. */
export async function setDepositXpub(ctx: Ctx, input: { networkId: string; xpub: string }) {
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(input.xpub);
  } catch {
    throw new ApiError("VALIDATION_ERROR", { message: "xpub: não é uma chave pública estendida válida." });
  }
  if (key.privateKey) {
    throw new ApiError("VALIDATION_ERROR", {
      message: "xpub: é uma chave privada estendida; o serviço só aceita a chave pública.",
    });
  }
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    await tx.insert(depositXpubs).values({ networkId: input.networkId, xpub: input.xpub, updatedAt: now })
      .onConflictDoUpdate({ target: depositXpubs.networkId, set: { xpub: input.xpub, updatedAt: now } });
    // Every key keeps its own counter for good: a key set again (A, then B, then A) goes on where it stopped.
    const [counter] = await tx.insert(depositXpubCounters)
      .values({ networkId: input.networkId, xpub: input.xpub, nextIndex: 0, updatedAt: now })
      .onConflictDoUpdate({
        target: [depositXpubCounters.networkId, depositXpubCounters.xpub],
        set: { updatedAt: now },
      }).returning();
    ctx.logger.info("deposit xpub set", { networkId: input.networkId, actor: actorLabel(ctx.actor) });
    return { networkId: input.networkId, nextIndex: counter.nextIndex };
  });
}

/**
 * The next invoice address of the network, claimed inside the caller's
 * transaction (the index moves on with the invoice, or not at all, and the
 * write lock makes two instances' claims take turns). An address some
 * payment of the network already has is passed over: a key replaced before
 * counters were kept per key, or the same key written another way (another
 * version prefix), starts below addresses it handed out. Null when the
 * operator configured no key.
 */
export async function claimInvoiceAddress(tx: Tx, networkId: string) {
  for (;;) {
    const [claimed] = await tx.update(depositXpubCounters)
      .set({ nextIndex: sql`${depositXpubCounters.nextIndex} + 1` })
      .where(and(
        eq(depositXpubCounters.networkId, networkId),
        eq(
          depositXpubCounters.xpub,
          sql`(SELECT ${depositXpubs.xpub} FROM ${depositXpubs} WHERE ${depositXpubs.networkId} = ${networkId})`,
        ),
      ))
      .returning({ xpub: depositXpubCounters.xpub, index: sql<number>`${depositXpubCounters.nextIndex} - 1` });
    if (!claimed) return null;
    const address = invoiceAddress(claimed.xpub, claimed.index);
    const [used] = await tx.select({ one: sql`1` }).from(payments)
      .where(and(eq(payments.networkId, networkId), eq(payments.recipient, address))).limit(1);
    if (!used) return { index: claimed.index, address };
  }
}

/** The address at `<xpub>/0/<index>`: keccak of the uncompressed public key, last 20 bytes. */
export function invoiceAddress(xpub: string, index: number): string {
  const child = HDKey.fromExtendedKey(xpub).deriveChild(0).deriveChild(index);
  const uncompressed = secp256k1.Point.fromBytes(child.publicKey!).toBytes(false);
  return `0x${bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12))}`;
}
