/**
 * Cross-checks against an independent client, the @nktkas/hyperliquid SDK:
 * what it signs the simulator accepts, and what our adapter signs is
 * byte-for-byte what it signs for the same action and nonce.
 */
import assert from "node:assert/strict";
import { ExchangeClient, HttpTransport, InfoClient, type IRequestTransport } from "@nktkas/hyperliquid";
import { privateKeyToAccount } from "viem/accounts";
import { createVenueBAdapter } from "../../venues/venue_b/adapter.ts";
import { cloidFromClientOrderId } from "../../venues/venue_b/mappers.ts";
import { ACTION_TTL_MS } from "../../venues/venue_b/constants.ts";
import {
  approveAgentAction,
  approveBuilderFeeAction,
  generateAgentKey,
  sendUsdcAction,
  signUserSignedAction,
  usdSendAction,
  userSignedTypedData,
  walletTypedData,
} from "../../venues/venue_b/signing.ts";
import { BUILDER, connectClient, fundedWallet, recordingFetch, startSim } from "./venue_b_fixture.ts";

type Payload = { action: Record<string, unknown>; signature: unknown; nonce: number };

/** An SDK transport that answers like the venue and keeps what it was asked to send. */
function capturingTransport(): { sent: Payload[]; transport: IRequestTransport } {
  const sent: Payload[] = [];
  const reply = (type: string) => {
    if (type === "order") {
      return { status: "ok", response: { type: "order", data: { statuses: [{ resting: { oid: 1 } }] } } };
    }
    if (type === "cancelByCloid") {
      return { status: "ok", response: { type: "cancel", data: { statuses: ["success"] } } };
    }
    return { status: "ok", response: { type: "default" } };
  };
  return {
    sent,
    transport: {
      isTestnet: false,
      request<T>(_endpoint: string, payload: unknown): Promise<T> {
        sent.push(payload as Payload);
        return Promise.resolve(reply(String((payload as Payload).action.type)) as T);
      },
    },
  };
}

Deno.test("VENUE_B simulator accepts an order, approveAgent and approveBuilderFee signed by the SDK", async () => {
  await using sim = startSim();
  const user = await fundedWallet(sim);
  await sim.control("POST", "/wallets", { address: BUILDER, usdc: "100" });
  const agent = generateAgentKey();
  const transport = new HttpTransport({ apiUrl: sim.baseUrl, isTestnet: false });
  const asUser = new ExchangeClient({
    transport,
    wallet: privateKeyToAccount(user.privateKey),
    signatureChainId: "0xa4b1",
  });
  const asAgent = new ExchangeClient({ transport, wallet: privateKeyToAccount(agent.privateKey) });
  const info = new InfoClient({ transport });

  await asUser.approveAgent({ agentAddress: agent.address, agentName: "sdk" });
  assert.deepEqual(await info.userRole({ user: agent.address }), { role: "agent", data: { user: user.address } });
  await asUser.approveBuilderFee({ builder: BUILDER, maxFeeRate: "0.01%" });
  assert.equal(await info.maxBuilderFee({ user: user.address, builder: BUILDER }), 10);

  const cloid = cloidFromClientOrderId("sdk-order");
  const placed = await asAgent.order({
    orders: [{ a: 0, b: true, p: "60000.0", s: "0.0010", r: false, t: { limit: { tif: "Gtc" } }, c: cloid }],
    grouping: "na",
    builder: { b: BUILDER, f: 10 },
  });
  const status = placed.response.data.statuses[0];
  assert.ok(typeof status === "object" && "resting" in status);
  const known = await info.orderStatus({ user: user.address, oid: cloid });
  assert.equal(known.status, "order");
  const stop = await asAgent.order({
    orders: [{
      a: 0,
      b: false,
      p: "50000",
      s: "0.001",
      r: true,
      t: { trigger: { isMarket: true, triggerPx: "55000", tpsl: "sl" } },
    }],
    grouping: "na",
  }).catch((error: Error) => error);
  assert.match(
    String(stop),
    /Reduce only order would increase position/,
    "the SDK reads our per-order errors as the venue's",
  );
  await asAgent.cancelByCloid({ cancels: [{ asset: 0, cloid }] });
  assert.equal((await info.frontendOpenOrders({ user: user.address })).length, 0);
  const book = await info.l2Book({ coin: "BTC" });
  assert.equal(book?.levels[1][0].px, "65001.0");
});

Deno.test("VENUE_B adapter signs orders, triggers, cancels, modifies and leverage exactly as the SDK does", async () => {
  await using sim = startSim();
  const nonce = Date.now();
  // The adapter's clock stands still here, so every action carries the same bound.
  const expiresAfter = nonce + ACTION_TTL_MS;
  const recorder = recordingFetch();
  const client = await connectClient(sim, { builderFee: 10 });
  const adapter = createVenueBAdapter({
    baseUrl: sim.baseUrl,
    secrets: client.box,
    fetch: recorder.fetch,
    now: () => nonce,
  });
  const ours = () => recorder.bodies.filter((b) => b.url.endsWith("/exchange")).at(-1)!.body as unknown as Payload;
  const { sent, transport } = capturingTransport();
  let sdkNonce = 0;
  const sdk = new ExchangeClient({
    transport,
    wallet: privateKeyToAccount(client.agent.privateKey),
    nonceManager: () => sdkNonce,
  });
  /** Has the SDK sign the same action with the nonce our adapter used, and compares the bytes. */
  const mirror = async (viaSdk: () => Promise<unknown>) => {
    const mine = ours();
    sdkNonce = mine.nonce;
    await viaSdk();
    const theirs = sent.at(-1)!;
    assert.equal(JSON.stringify(mine.action), JSON.stringify(theirs.action), "same action bytes");
    assert.deepEqual(mine.signature, theirs.signature, "same signature");
    assert.equal(mine.nonce, theirs.nonce);
  };

  await adapter.placeOrder(client.credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "LIMIT",
    quantity: "0.0010",
    price: "60000.0",
    reduceOnly: false,
    clientOrderId: "cross-1",
    builder: { address: BUILDER, feeTenthsBps: 10 },
  });
  await mirror(() =>
    sdk.order({
      orders: [{
        a: 0,
        b: true,
        p: "60000",
        s: "0.001",
        r: false,
        t: { limit: { tif: "Gtc" } },
        c: cloidFromClientOrderId("cross-1"),
      }],
      grouping: "na",
      builder: { b: BUILDER, f: 10 },
    }, { expiresAfter })
  );

  await adapter.cancelOrder(client.credentials, "BTCUSDC", "cross-1");
  await mirror(() =>
    sdk.cancelByCloid({ cancels: [{ asset: 0, cloid: cloidFromClientOrderId("cross-1") }] }, { expiresAfter })
  );

  await adapter.placeOrder(client.credentials, {
    symbol: "ETHUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "1",
    reduceOnly: false,
    clientOrderId: "cross-2",
  });
  await mirror(() =>
    sdk.order({
      orders: [{
        a: 1,
        b: true,
        p: "3150",
        s: "1",
        r: false,
        t: { limit: { tif: "Ioc" } },
        c: cloidFromClientOrderId("cross-2"),
      }],
      grouping: "na",
    }, { expiresAfter })
  );

  await adapter.placeProtection(client.credentials, {
    symbol: "ETHUSDC",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "2800",
    quantity: "1",
    clientOrderId: "cross-3",
  });
  await mirror(() =>
    sdk.order({
      orders: [{
        a: 1,
        b: false,
        p: "2520",
        s: "1",
        r: true,
        t: { trigger: { isMarket: true, triggerPx: "2800", tpsl: "sl" } },
        c: cloidFromClientOrderId("cross-3"),
      }],
      grouping: "na",
    }, { expiresAfter })
  );

  await adapter.setLeverage(client.credentials, "SOLUSDC", 7);
  await mirror(() => sdk.updateLeverage({ asset: 2, isCross: true, leverage: 7 }, { expiresAfter }));

  await adapter.placeOrder(client.credentials, {
    symbol: "SOLUSDC",
    side: "BUY",
    type: "LIMIT",
    quantity: "1",
    price: "140",
    reduceOnly: false,
    clientOrderId: "cross-4",
  });
  recorder.bodies.length = 0;
  await adapter.modifyOrder(client.credentials, {
    symbol: "SOLUSDC",
    clientOrderId: "cross-4",
    quantity: "2",
    price: "141.5",
  });
  const cloid = cloidFromClientOrderId("cross-4");
  await mirror(() =>
    sdk.modify({
      oid: cloid,
      order: { a: 2, b: true, p: "141.5", s: "2", r: false, t: { limit: { tif: "Gtc" } }, c: cloid },
    }, { expiresAfter })
  );
});

Deno.test("VENUE_B user-signed actions and their wallet typed data sign exactly as the SDK does", async () => {
  const user = generateAgentKey();
  const account = privateKeyToAccount(user.privateKey);
  const nonce = Date.now();
  const { sent, transport } = capturingTransport();
  const sdk = new ExchangeClient({ transport, wallet: account, signatureChainId: "0xa4b1", nonceManager: () => nonce });
  const agent = generateAgentKey().address;
  const destination = generateAgentKey().address;
  const cases = [
    [
      approveAgentAction({ isMainnet: true, agentAddress: agent, agentName: "svc", nonce }),
      () => sdk.approveAgent({ agentAddress: agent, agentName: "svc" }),
    ],
    [
      approveAgentAction({ isMainnet: true, agentAddress: agent, nonce }),
      () => sdk.approveAgent({ agentAddress: agent, agentName: null }),
    ],
    [
      approveBuilderFeeAction({ isMainnet: true, builder: BUILDER, maxFeeTenthsBps: 10, nonce }),
      () => sdk.approveBuilderFee({ builder: BUILDER, maxFeeRate: "0.01%" }),
    ],
    [
      usdSendAction({ isMainnet: true, destination, amount: "25.5", time: nonce }),
      () => sdk.usdSend({ destination, amount: "25.5" }),
    ],
    [
      sendUsdcAction({ isMainnet: true, destination, amount: "25.5", nonce }),
      () =>
        sdk.sendAsset({
          destination,
          sourceDex: "",
          destinationDex: "",
          token: "USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
          amount: "25.5",
        }),
    ],
  ] as const;
  for (const [action, viaSdk] of cases) {
    await viaSdk();
    const theirs = sent.at(-1)!;
    const mine = signUserSignedAction(user.privateKey, action);
    assert.equal(JSON.stringify(mine.action), JSON.stringify(theirs.action), `same ${action.type} action`);
    assert.deepEqual(mine.signature, theirs.signature, `same ${action.type} signature`);
    // What the hosted page hands the user's wallet signs to the same bytes.
    const walletSignature = await account.signTypedData(userSignedTypedData(action));
    const { r, s, v } = theirs.signature as { r: string; s: string; v: number };
    assert.equal(walletSignature, `${r}${s.slice(2)}${v.toString(16)}`);
    // The JSON the page embeds for eth_signTypedData_v4 survives a round trip and signs the same.
    const embedded = JSON.parse(JSON.stringify(walletTypedData(action)));
    assert.equal(await account.signTypedData(embedded), walletSignature);
  }
});
