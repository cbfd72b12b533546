/**
 * Three instances signing VENUE_B actions for the same agents: the nonces come
 * from the database (`signer_nonces`), so the venue never sees one twice nor
 * refuses one, whichever instance signs. Checked at the simulator, which keeps
 * the venue's rule (per signer: never seen, above the smallest of its 100
 * highest, inside the time window) and counts what it accepted and refused.
 * And a signal posted to every instance at once reaches the venue once per
 * client.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner } from "../_helpers/http.ts";
import { openTrading, seedTraders, venueBCredentials } from "../bench/seed_accounts.ts";
import { type Credential, Fleet, MASTER_KEY } from "./fleet.ts";
import type { HexAddress } from "../../venues/types.ts";
import type { WireFill } from "../../venues/venue_b/wire.ts";
import { signalB } from "../execution/execution_fixture.ts";

/** Lifted at the service and the simulators alike: this is about who signs what, not about the budgets. */
const LIFTED = { VENUE_B_IP_WEIGHT_PER_MINUTE: "100000000", VENUE_A_IP_WEIGHT_PER_MINUTE: "100000000" };

interface NonceChecks {
  accepted: number;
  refused: number;
  refusals: { signer: string; nonce: number; reason: string }[];
}

Deno.test("three instances sign VENUE_B actions for shared agents: no nonce repeated or refused; a signal sent to every instance reaches the venue once per client", async (t) => {
  const fleet = await Fleet.start({ instances: 3, env: LIFTED });
  // The service's weight budget is lifted for this burst; the simulator's IP limit (1,200 a minute by default,
  // as at the venue) is lifted with it, or the venue would answer the burst 429.
  await fleet.simulator("venueB", "PUT", "/limits", { ipWeightPerMinute: 100_000_000 });
  // The test's own handle on the fleet's database, to seed traders as the hosted page and a reconcile leave them.
  const seeder = await startTestEnv({
    databaseUrl: fleet.databaseUrl,
    venues: fleet.simulators.urls,
    env: { MASTER_KEY, ...LIFTED },
  });
  try {
    const partner = await createPartner(seeder, {
      partnerId: "nonces",
      limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 },
    });
    const credential: Credential = { clientId: partner.clientId, clientSecret: partner.clientSecret };
    await openTrading(seeder, fleet.simulators.urls);
    const nonceChecks = (): Promise<NonceChecks> => fleet.simulator("venueB", "GET", "/nonces");
    /** Distinct opening orders (BUY fills) at the venue per wallet. */
    const entriesAt = async (wallet: string) => {
      const fills = await info<WireFill[]>(fleet, { type: "userFills", user: wallet });
      return new Set(fills.filter((fill) => fill.side === "B").map((fill) => fill.oid)).size;
    };

    await t.step(
      "40 openings at once through the proxy, 10 clients per agent, signed by all three instances",
      async () => {
        const wallets = await walletsOf(await venueBCredentials(fleet.simulators.urls, seeder, 4));
        await seedTraders(seeder, {
          partnerId: "nonces",
          providerId: "VENUE_B",
          count: 40,
          credentials: wallets.credentials,
          now: Date.now(),
        });
        const before = await nonceChecks();
        const served = [...fleet.served];
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            fleet.partner(credential, "POST", "/v1/orders/execute", {
              idempotencyKey: `fleet-open-${i}`,
              body: {
                externalUserId: `user-VENUE_B-${i}`,
                type: "OPEN_POSITION",
                providerId: "VENUE_B",
                symbol: "BTCUSDC",
                side: "BUY",
                orderType: "LIMIT",
                price: 65100,
                quantity: 0.003,
                stopLossPrice: 63100,
                takeProfits: [{ price: 67100, share: 0.5 }, { price: 69100, share: 0.5 }],
              },
            })),
        );
        // Ten clients share each wallet (an agent signs for one wallet only), so an opening whose gates read the
        // wallet after another client's fill sees a position that is not its own: mixed exposure, refused before
        // anything is signed. Every other opening trades once.
        const traded = answers.filter((answer) => answer.status === 200);
        for (const answer of answers.filter((answer) => answer.status !== 200)) {
          assert.equal(`${answer.status} ${answer.body?.error?.code}`, "422 ENTRY_CIRCUIT_OPEN", answer.text);
        }
        assert.ok(traded.length >= 20, `${traded.length} of 40 openings traded`);
        assert.ok(fleet.served.every((count, index) => count - served[index] >= 13), "each instance sent a third");
        const after = await nonceChecks();
        assert.equal(after.refused - before.refused, 0, JSON.stringify(after.refusals));
        // Each opening is an entry and its protections: at least two signed actions apiece.
        const accepted = after.accepted - before.accepted;
        assert.ok(accepted >= 2 * traded.length, `${accepted} actions accepted`);
        let entries = 0;
        for (const wallet of wallets.addresses) entries += await entriesAt(wallet);
        assert.equal(entries, traded.length, "one entry at the venue per opening that traded");
        // The nonces every instance drew for the four agents, kept in one row each.
        const rows = await seeder.deps.db.read.all<[string, number]>("SELECT signer, last_nonce FROM signer_nonces");
        assert.equal(rows.length, 4);
      },
    );

    await t.step("one signal posted to all three instances at once: one entry per client at the venue", async () => {
      const wallets = await walletsOf(await venueBCredentials(fleet.simulators.urls, seeder, 3));
      // The clients above hold their one allowed trade: the signal is for these 30, of another partner.
      await createPartner(seeder, { partnerId: "nonces-signal" });
      await seedTraders(seeder, {
        partnerId: "nonces-signal",
        providerId: "VENUE_B",
        count: 30,
        credentials: wallets.credentials,
        now: Date.now(),
      });
      const before = await nonceChecks();
      const signal = signalB("fleet-b-1");
      const answers = await Promise.all(
        [0, 1, 2].map((index) => fleet.operator("POST", "/operator/v1/signals", signal, index)),
      );
      const dispatched = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.dispatched);
      assert.ok(dispatched.length >= 1, answers.map((answer) => answer.text).join("\n"));
      for (const answer of answers) assert.ok([200, 409].includes(answer.status), answer.text);
      for (const wallet of wallets.addresses) assert.equal(await entriesAt(wallet), 10, `entries at ${wallet}`);
      const after = await nonceChecks();
      assert.equal(after.refused - before.refused, 0, JSON.stringify(after.refusals));
    });
  } finally {
    await seeder.close();
    await fleet.stop();
  }
});

/** The wallets behind a set of seeded VENUE_B credentials. */
async function walletsOf(credentials: Awaited<ReturnType<typeof venueBCredentials>>) {
  const addresses = await Promise.all(
    credentials.map(async (make) => (await make("probe")).accountAddress as HexAddress),
  );
  return { credentials, addresses };
}

async function info<T>(fleet: Fleet, body: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${fleet.simulators.urls.venueB}/info`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
  return await response.json();
}
