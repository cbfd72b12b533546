/**
 * Deposit invoice addresses are handed out once: every key the operator sets
 * keeps its own counter for good, whatever keys came between, and an address
 * some payment already has is passed over. Invoices are issued against anvil
 * (the service reads the token's decimals on chain), as in the EVM payment tests.
 */
import assert from "node:assert/strict";
import { HDKey } from "@scure/bip32";
import { bytesToHex } from "@noble/hashes/utils.js";
import { sql } from "drizzle-orm";
import { privateKeyToAccount } from "viem/accounts";
import { withTransaction } from "../../db/client.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { migratedBefore } from "../_helpers/migrations.ts";
import { createPartner, expectJson, operator } from "../_helpers/http.ts";
import { startChain } from "../_helpers/evm/chain.ts";
import { ik } from "../setup/setup_fixture.ts";
import { clientIdOf } from "../performance/trade_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

/** An operator's wallet: its account-level extended public key, and the address at `<xpub>/0/<index>`. */
function operatorWallet(seedByte: number) {
  const account = HDKey.fromMasterSeed(new Uint8Array(32).fill(seedByte)).derive("m/44'/60'/0'");
  return {
    xpub: account.publicExtendedKey,
    addressAt: (index: number) =>
      privateKeyToAccount(`0x${bytesToHex(account.deriveChild(0).deriveChild(index).privateKey!)}`).address
        .toLowerCase(),
  };
}

Deno.test("deposit invoices: a key set again (A, B, A) goes on from its own counter and never hands out an address twice", async () => {
  const arbitrum = await startChain(42161);
  const usdt = await arbitrum.deployToken("USDT", 6);
  const env = await startTestEnv({
    env: { EVM_RPC_ARBITRUM: arbitrum.url, EVM_TOKENS: JSON.stringify({ arbitrum: { USDT: usdt } }) },
  });
  try {
    const partner = await createPartner(env, { partnerId: "payer" });
    await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
    const clientId = await clientIdOf(env, "ana", "payer");
    const owed = await openObligation(env, {
      partnerId: "payer",
      clientId,
      reference: "invoices",
      providerId: "VENUE_A",
      source: "MONTHLY_SUBSCRIPTION",
    });
    const handedOut: string[] = [];
    const invoice = async () => {
      const body = await expectJson(
        await partner.call("POST", `/v1/users/ana/obligations/${owed.obligationId}/payment-instructions`, {
          body: { method: "DEPOSIT_INVOICE", networkId: "arbitrum" },
          headers: ik(),
        }),
        200,
      );
      assert.ok(!handedOut.includes(body.invoice.address), `${body.invoice.address} was handed out before`);
      handedOut.push(body.invoice.address);
      return [body.invoice.address, body.invoice.derivationIndex];
    };
    const setKey = async (xpub: string) =>
      (await expectJson(await operator(env, "PUT", "/operator/v1/deposit-xpub/arbitrum", { xpub }), 200)).nextIndex;
    const a = operatorWallet(7);
    const b = operatorWallet(8);

    assert.equal(await setKey(a.xpub), 0);
    assert.deepEqual(await invoice(), [a.addressAt(0), 0]);
    assert.deepEqual(await invoice(), [a.addressAt(1), 1]);
    assert.equal(await setKey(b.xpub), 0);
    assert.deepEqual(await invoice(), [b.addressAt(0), 0]);
    // A again: it goes on from 2, not from 0 (whose address an earlier invoice holds).
    assert.equal(await setKey(a.xpub), 2);
    assert.deepEqual(await invoice(), [a.addressAt(2), 2]);
    assert.equal(await setKey(b.xpub), 1);
    assert.deepEqual(await invoice(), [b.addressAt(1), 1]);

    // A counter behind the addresses handed out (a key replaced before counters were kept per key):
    // the addresses some payment of the network has are passed over.
    await withTransaction(env.deps.db, (tx) => tx.run(sql`UPDATE deposit_xpub_counters SET next_index = 0`));
    assert.deepEqual(await invoice(), [b.addressAt(2), 2]);

    // Invoices issued at once each claim their own index inside their own transaction.
    const together = await Promise.all(Array.from({ length: 8 }, invoice));
    assert.deepEqual(together.map(([, index]) => index).sort((x, y) => x - y), [3, 4, 5, 6, 7, 8, 9, 10]);
  } finally {
    await env.close();
    await arbitrum.stop();
  }
});

Deno.test("the deposit_xpub_counters migration carries each network's counter over to its key", async () => {
  const { db, migrateRest } = await migratedBefore("CREATE TABLE `deposit_xpub_counters`");
  try {
    await db.execute(
      "INSERT INTO deposit_xpubs (network_id, xpub, next_index, updated_at) VALUES ('arbitrum', 'xpubA', 7, 1), ('bnb', 'xpubB', 3, 2)",
    );
    await migrateRest();
    const counters = await db.execute(
      "SELECT network_id, xpub, next_index, updated_at FROM deposit_xpub_counters ORDER BY network_id",
    );
    assert.deepEqual(counters.rows.map((row) => [...Object.values(row)]), [["arbitrum", "xpubA", 7, 1], [
      "bnb",
      "xpubB",
      3,
      2,
    ]]);
    const current = await db.execute("SELECT * FROM deposit_xpubs ORDER BY network_id");
    assert.deepEqual(current.rows.map((row) => [row.network_id, row.xpub]), [["arbitrum", "xpubA"], ["bnb", "xpubB"]]);
  } finally {
    db.close();
  }
});
