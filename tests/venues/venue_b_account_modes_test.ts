/**
 * VENUE_B balances for every account abstraction mode. Standard accounts
 * ("default" until set, "disabled" once set, and the legacy "dexAbstraction",
 * whose USDC stays with the perps) keep their USDC collateral in the perp
 * clearinghouse state; unified-account and portfolio-margin accounts keep
 * every balance and hold in the spot clearinghouse state, where the perp state
 * no longer describes collateral. The venue is read back through the
 * @nktkas/hyperliquid SDK, an independent client of the same wire.
 */
import assert from "node:assert/strict";
import { ExchangeClient, HttpTransport, InfoClient } from "@nktkas/hyperliquid";
import { privateKeyToAccount } from "viem/accounts";
import { cmp, sub } from "../../venues/decimal.ts";
import { USDC_TOKEN } from "../../venues/venue_b/constants.ts";
import { signUserSignedAction } from "../../venues/venue_b/signing.ts";
import { connectClient, fundedWallet, startSim } from "./venue_b_fixture.ts";

const MODES = [
  { abstraction: "default", collateral: "perp" },
  { abstraction: "disabled", collateral: "perp" },
  { abstraction: "dexAbstraction", collateral: "perp" },
  { abstraction: "unifiedAccount", collateral: "spot" },
  { abstraction: "portfolioMargin", collateral: "spot" },
] as const;

function sameAmount(actual: string, expected: string, what: string) {
  assert.equal(cmp(actual, expected), 0, `${what}: ${actual}, expected ${expected}`);
}

Deno.test("VENUE_B getAccount takes balances from where the account's mode keeps them, positions from the perp state", async (t) => {
  await using sim = startSim();
  const info = new InfoClient({ transport: new HttpTransport({ apiUrl: sim.baseUrl, isTestnet: false }) });
  await sim.control("PUT", "/markets/ETH", { markPrice: "3200", bid: "3199.9", ask: "3200.1" });
  for (const { abstraction, collateral } of MODES) {
    await t.step(abstraction, async () => {
      const { adapter, credentials, principal } = await connectClient(sim, { usdc: "10000" });
      const user = principal.address;
      await sim.control("PUT", `/wallets/${user}/abstraction`, { abstraction });
      assert.equal(await info.userAbstraction({ user }), abstraction);
      await adapter.placeOrder(credentials, {
        symbol: "ETHUSDC",
        side: "BUY",
        type: "MARKET",
        quantity: "1",
        reduceOnly: false,
        clientOrderId: `open-${abstraction}`,
      });

      const [account, perp, spot] = await Promise.all([
        adapter.getAccount(credentials),
        info.clearinghouseState({ user }),
        info.spotClearinghouseState({ user }),
      ]);
      assert.deepEqual(account.positions.map((p) => [p.symbol, p.quantity]), [["ETHUSDC", "1"]]);
      const margin = perp.assetPositions[0].position.marginUsed;
      assert.equal(account.balances.length, 1);
      const [usdc] = account.balances;
      assert.equal(usdc.asset, "USDC");
      assert.equal(usdc.usdValue, usdc.total);
      // The deposit less the opening fee, with the position's margin held, wherever the venue keeps it.
      assert.ok(cmp(usdc.total, "9990") > 0 && cmp(usdc.total, "10000") < 0, usdc.total);
      sameAmount(usdc.free, sub(usdc.total, margin), "free");

      if (collateral === "spot") {
        const [row, ...others] = spot.balances;
        assert.deepEqual([row.coin, others.length], ["USDC", 0]);
        sameAmount(usdc.total, row.total, "total from the spot state");
        sameAmount(row.hold, margin, "the spot hold is the perp margin");
        sameAmount(perp.withdrawable, "0", "the perp state holds no collateral");
        assert.equal(spot.portfolioMarginEnabled, abstraction === "portfolioMargin" ? true : undefined);
      } else {
        assert.deepEqual(spot.balances, []);
        sameAmount(usdc.total, perp.marginSummary.accountValue, "total from the perp state");
        sameAmount(usdc.free, perp.withdrawable, "free from the perp state");
      }
    });
  }
});

Deno.test("VENUE_B simulator takes a unified or portfolio-margin account's sendAsset only through spot", async (t) => {
  await using sim = startSim();
  const transport = new HttpTransport({ apiUrl: sim.baseUrl, isTestnet: false });
  const info = new InfoClient({ transport });
  const platform = await fundedWallet(sim, "1");
  for (const { abstraction, collateral } of MODES) {
    await t.step(abstraction, async () => {
      const payer = await fundedWallet(sim, "100");
      await sim.control("PUT", `/wallets/${payer.address}/abstraction`, { abstraction });
      const wallet = new ExchangeClient({
        transport,
        wallet: privateKeyToAccount(payer.privateKey),
        signatureChainId: "0xa4b1",
      });
      const send = (sourceDex: string, destinationDex: string, amount: string) =>
        wallet.sendAsset({
          destination: platform.address,
          sourceDex,
          destinationDex,
          token: USDC_TOKEN.mainnet,
          amount,
        });
      const since = Date.now() - 1;
      if (collateral === "spot") {
        // The venue's own refusal of a perp-to-perp send from a pooled account.
        await assert.rejects(send("", "", "1"), /Unified account only supports sending assets through spot/);
        await assert.rejects(send("spot", "", "1"), /Unified account only supports sending assets through spot/);
        await send("spot", "spot", "2");
      } else {
        await send("", "", "2");
        await send("", "spot", "3");
      }
      const ledger = await info.userNonFundingLedgerUpdates({ user: payer.address, startTime: since });
      const sends = ledger.map((update) => update.delta).filter((delta) => delta.type === "send");
      assert.deepEqual(
        sends.map((delta) => [delta.sourceDex, delta.destinationDex, delta.token, delta.amount]),
        collateral === "spot"
          ? [["spot", "spot", "USDC", "2.0"]]
          : [["", "", "USDC", "2.0"], ["", "spot", "USDC", "3.0"]],
      );
    });
  }
});

Deno.test("VENUE_B builds a payer's USDC send from where the payer's mode keeps it, and reads its dexes back from the ledger", async (t) => {
  await using sim = startSim();
  const platform = await fundedWallet(sim, "1");
  for (const { abstraction, collateral } of MODES) {
    await t.step(abstraction, async () => {
      const { adapter, principal } = await connectClient(sim, { usdc: "100" });
      await sim.control("PUT", `/wallets/${principal.address}/abstraction`, { abstraction });
      const action = await adapter.walletApprovals!.usdcTransfer({
        from: principal.address,
        destination: platform.address,
        amount: "2",
        signatureChainId: "0xa4b1",
      });
      const dex = collateral === "spot" ? "spot" : "";
      assert.deepEqual([action.type, action.sourceDex, action.destinationDex], ["sendAsset", dex, dex]);
      const since = Date.now() - 1;
      await adapter.submitUserSignedAction!(signUserSignedAction(principal.privateKey, action));
      const send = (await adapter.getLedger!(principal.address, since)).find((entry) => entry.type === "send")!;
      assert.deepEqual(
        [send.token, send.amount, send.sourceDex, send.destinationDex, send.nonce],
        ["USDC", "2", dex, dex, action.nonce],
      );
    });
  }
});

Deno.test("VENUE_B simulator refuses an unknown abstraction mode", async () => {
  await using sim = startSim();
  await assert.rejects(
    sim.control("PUT", `/wallets/0x${"12".repeat(20)}/abstraction`, { abstraction: "everything" }),
    /abstraction must be one of/,
  );
});
