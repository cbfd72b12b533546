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
import { eq, sql } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { depositXpubs } from "../../db/schema.ts";
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
    const [row] = await tx.insert(depositXpubs).values({
      networkId: input.networkId,
      xpub: input.xpub,
      nextIndex: 0,
      updatedAt: now,
    }).onConflictDoUpdate({
      target: depositXpubs.networkId,
      // A new key starts its own indexes; the same key again keeps counting (no address is handed out twice).
      set: {
        xpub: input.xpub,
        nextIndex: sql`CASE WHEN ${depositXpubs.xpub} = ${input.xpub} THEN ${depositXpubs.nextIndex} ELSE 0 END`,
        updatedAt: now,
      },
    }).returning();
    ctx.logger.info("deposit xpub set", { networkId: row.networkId, actor: actorLabel(ctx.actor) });
    return { networkId: row.networkId, nextIndex: row.nextIndex };
  });
}

/**
 * The next invoice address of the network, claimed inside the caller's
 * transaction (the index moves on with the invoice, or not at all). Null
 * when the operator configured no key.
 */
export async function claimInvoiceAddress(tx: Tx, networkId: string) {
  const [claimed] = await tx.update(depositXpubs).set({ nextIndex: sql`${depositXpubs.nextIndex} + 1` })
    .where(eq(depositXpubs.networkId, networkId))
    .returning({ xpub: depositXpubs.xpub, index: sql<number>`${depositXpubs.nextIndex} - 1` });
  if (!claimed) return null;
  return { index: claimed.index, address: invoiceAddress(claimed.xpub, claimed.index) };
}

/** The address at `<xpub>/0/<index>`: keccak of the uncompressed public key, last 20 bytes. */
export function invoiceAddress(xpub: string, index: number): string {
  const child = HDKey.fromExtendedKey(xpub).deriveChild(0).deriveChild(index);
  const uncompressed = secp256k1.Point.fromBytes(child.publicKey!).toBytes(false);
  return `0x${bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12))}`;
}
