import assert from "node:assert/strict";
import {
  approveAgentAction,
  approveBuilderFeeAction,
  generateAgentKey,
  type Hex,
  signL1Action,
  signUserSignedAction,
  usdSendAction,
} from "../../venues/venue_b/signing.ts";
import { BUILDER, fundedWallet, type SimHandle, startSim, testNonce, type Wallet } from "./venue_b_fixture.ts";

const DAY = 86_400_000;

/** Signs an L1 action exactly as given (key order, decimals, case) and posts it. */
async function sendL1(
  sim: SimHandle,
  signer: Wallet,
  action: unknown,
  extra: { nonce?: number; hashed?: unknown; expiresAfter?: number } = {},
) {
  const nonce = extra.nonce ?? testNonce();
  const signature = signL1Action(signer.privateKey, {
    action: extra.hashed ?? action,
    nonce,
    isMainnet: true,
    expiresAfter: extra.expiresAfter,
  });
  return await sim.post("/exchange", {
    action,
    nonce,
    signature,
    vaultAddress: null,
    ...(extra.expiresAfter ? { expiresAfter: extra.expiresAfter } : {}),
  });
}

async function sendUser(sim: SimHandle, signer: Wallet, action: Parameters<typeof signUserSignedAction>[1]) {
  const signed = signUserSignedAction(signer.privateKey, action);
  return await sim.post("/exchange", signed);
}

const btcOrder = (p: string, s: string, extra: Record<string, unknown> = {}) => ({
  type: "order",
  orders: [{ a: 0, b: true, p, s, r: false, t: { limit: { tif: "Gtc" } }, ...extra }],
  grouping: "na",
});

function orderError(reply: { body: unknown }): string {
  return (reply.body as { response: { data: { statuses: { error: string }[] } } }).response.data.statuses[0].error;
}

Deno.test("VENUE_B simulator answers info requests in the venue's shapes, as application/json", async () => {
  await using sim = startSim();
  const meta = await sim.post("/info", { type: "meta" });
  assert.equal(meta.status, 200);
  assert.deepEqual((meta.body as { universe: unknown[] }).universe[0], {
    name: "BTC",
    szDecimals: 5,
    maxLeverage: 40,
    marginTableId: 40,
  });
  const mids = await sim.post("/info", { type: "allMids" });
  assert.deepEqual(mids.body, { BTC: "65000.0", ETH: "3000.0", SOL: "150.0" });
  const book = (await sim.post("/info", { type: "l2Book", coin: "BTC" })).body as {
    levels: { px: string; sz: string; n: number }[][];
  };
  assert.deepEqual(book.levels[0][0], { px: "64999.0", sz: "5.0", n: 1 });
  assert.deepEqual(book.levels[1][0], { px: "65001.0", sz: "5.0", n: 1 });
  assert.equal((await sim.post("/info", { type: "l2Book", coin: "NOPE" })).body, null);
  const nobody = await sim.post("/info", { type: "clearinghouseState", user: generateAgentKey().address });
  assert.equal((nobody.body as { marginSummary: { accountValue: string } }).marginSummary.accountValue, "0.0");
  assert.deepEqual((await sim.post("/info", { type: "orderStatus", user: generateAgentKey().address, oid: 7 })).body, {
    status: "unknownOid",
  });
  const unknown = await sim.post("/info", { type: "somethingElse" });
  assert.equal(unknown.status, 422);
  assert.match(unknown.body as string, /^Failed to deserialize the JSON body into the target type/);
});

Deno.test("VENUE_B simulator refuses bodies it cannot read with 400/422 text, like the venue", async () => {
  await using sim = startSim();
  const response = await fetch(`${sim.baseUrl}/exchange`, { method: "POST", body: "{not json" });
  assert.equal(response.status, 400);
  assert.match(response.headers.get("Content-Type") ?? "", /text\/plain/);
  await response.body?.cancel();
  const wallet = await fundedWallet(sim);
  const numberPrice = await sendL1(sim, wallet, {
    type: "order",
    orders: [{ a: 0, b: true, p: 65000, s: "0.001", r: false, t: { limit: { tif: "Gtc" } } }],
    grouping: "na",
  });
  assert.equal(numberPrice.status, 422);
  const unknownAction = await sendL1(sim, wallet, { type: "teleport" });
  assert.equal(unknownAction.status, 422);
});

Deno.test("VENUE_B simulator re-canonicalises before hashing: key order, zeros, hex case and false flags change the signer", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  const doesNotExist = /^User or API Wallet 0x[0-9a-f]{40} does not exist\.$/;
  const canonical = btcOrder("60000", "0.001");
  // Sent with a trailing zero but signed over the canonical form: the venue normalises, so it verifies.
  const normalised = await sendL1(sim, wallet, btcOrder("60000.0", "0.0010"), { hashed: canonical });
  assert.ok("resting" in (normalised.body as { response: { data: { statuses: object[] } } }).response.data.statuses[0]);
  // Signed over the trailing zero itself: the venue hashes something else and recovers a stranger.
  const zeros = await sendL1(sim, wallet, btcOrder("60000.0", "0.001"));
  assert.match((zeros.body as { response: string }).response, doesNotExist);
  const reordered = { type: "order", grouping: "na", orders: canonical.orders };
  assert.match(((await sendL1(sim, wallet, reordered)).body as { response: string }).response, doesNotExist);
  const upperCloid = btcOrder("60000", "0.001", { c: "0x0000000000000000000000000000000A" });
  assert.match(((await sendL1(sim, wallet, upperCloid)).body as { response: string }).response, doesNotExist);
  const falseFlag = { type: "cancel", cancels: [{ a: 0, o: 1 }], f: false };
  assert.match(((await sendL1(sim, wallet, falseFlag)).body as { response: string }).response, doesNotExist);
  const withoutFlag = await sendL1(sim, wallet, falseFlag, { hashed: { type: "cancel", cancels: [{ a: 0, o: 1 }] } });
  assert.deepEqual((withoutFlag.body as { response: unknown }).response, {
    type: "cancel",
    data: { statuses: [{ error: "Order was never placed, already canceled, or filled." }] },
  });
});

Deno.test("VENUE_B simulator accepts r and s without zero padding and refuses a v other than 27/28", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  for (let attempt = 0; attempt < 400; attempt++) {
    const nonce = testNonce();
    const action = { type: "noop" };
    const signature = signL1Action(wallet.privateKey, { action, nonce, isMainnet: true });
    if (!signature.r.startsWith("0x0")) continue;
    const unpadded = { ...signature, r: `0x${BigInt(signature.r).toString(16)}` as Hex };
    const reply = await sim.post("/exchange", { action, nonce, signature: unpadded });
    assert.deepEqual(reply.body, { status: "ok", response: { type: "default" } });
    break;
  }
  const nonce = testNonce();
  const signature = signL1Action(wallet.privateKey, { action: { type: "noop" }, nonce, isMainnet: true });
  const reply = await sim.post("/exchange", { action: { type: "noop" }, nonce, signature: { ...signature, v: 0 } });
  assert.equal((reply.body as { status: string }).status, "err");
});

Deno.test("VENUE_B simulator enforces the tick, lot and minimum-value rules with the venue's texts", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  const cases: [string, string, string][] = [
    ["65000.5", "0.001", "Price must be divisible by tick size."],
    ["60000.1", "0.001", "Price must be divisible by tick size."],
    ["60000", "0.000001", "Order has invalid size."],
    ["60000", "0", "Order has zero size."],
    ["60000", "0.0001", "Order must have minimum value of $10."],
    ["10000", "0.01", "Order price cannot be more than 80% away from the reference price"],
  ];
  for (const [p, s, text] of cases) {
    assert.equal(orderError(await sendL1(sim, wallet, btcOrder(p, s))), text, `p=${p} s=${s}`);
  }
  const sol = {
    type: "order",
    orders: [{ a: 2, b: true, p: "140.123", s: "1", r: false, t: { limit: { tif: "Gtc" } } }],
    grouping: "na",
  };
  assert.equal(
    orderError(await sendL1(sim, wallet, sol)),
    "Price must be divisible by tick size.",
    "SOL allows 4 decimals, 5 figures",
  );
  const integerPrice = btcOrder("123456", "0.001");
  assert.equal(
    orderError(await sendL1(sim, wallet, integerPrice)),
    "Order price cannot be more than 80% away from the reference price",
    "integers pass the tick rule",
  );
});

Deno.test("VENUE_B simulator keeps the 100 highest nonces per signer inside the time window", async () => {
  let now = 1_800_000_000_000;
  await using sim = startSim({ now: () => now });
  const wallet = await fundedWallet(sim);
  const noop = (nonce: number) => sendL1(sim, wallet, { type: "noop" }, { nonce });
  assert.deepEqual((await noop(now)).body, { status: "ok", response: { type: "default" } });
  // The venue's texts name the nonce (and the bound it missed).
  const refusal = async (nonce: number) => await noop(nonce).then((reply) => reply.body as { response: string });
  assert.deepEqual(await refusal(now), { status: "err", response: `Invalid nonce: duplicate nonce ${now}` });
  assert.equal(
    (await refusal(now - 2 * DAY)).response,
    `Invalid nonce: nonce too low ${now - 2 * DAY} < ${now - 2 * DAY + 1}`,
  );
  assert.equal((await refusal(now + DAY)).response, `Invalid nonce: nonce too high ${now + DAY} > ${now + DAY - 1}`);
  for (let i = 1; i <= 100; i++) await noop(now + i * 10);
  assert.deepEqual(await refusal(now + 5), {
    status: "err",
    response: `Invalid nonce: nonce too low ${now + 5} < ${now + 10}`,
  });
  assert.equal(((await noop(now + 2000)).body as { status: string }).status, "ok");
  now += 3 * DAY;
  assert.match((await refusal(now - 3 * DAY + 3000)).response, /^Invalid nonce: nonce too low \d+ < \d+$/);
  const expired = await sendL1(sim, wallet, { type: "noop" }, { nonce: now, expiresAfter: now - 1 });
  assert.match((expired.body as { response: string }).response, /^Action has expired/);
});

Deno.test("VENUE_B simulator lets only funded wallets sign user actions, on its own network", async () => {
  await using sim = startSim();
  const user = await fundedWallet(sim);
  const agent = generateAgentKey();
  const approve = (signer: Wallet, isMainnet = true) =>
    sendUser(
      sim,
      signer,
      approveAgentAction({ isMainnet, agentAddress: agent.address, agentName: "x", nonce: testNonce() }),
    );
  assert.deepEqual((await approve(user)).body, { status: "ok", response: { type: "default" } });
  const byAgent = await approve(agent);
  assert.deepEqual(byAgent.body, {
    status: "err",
    response: `Must deposit before performing actions. User: ${agent.address}`,
  });
  assert.equal(
    ((await approve(user, false)).body as { status: string }).status,
    "err",
    "a testnet signature is refused on mainnet",
  );
  const signed = signUserSignedAction(
    user.privateKey,
    approveAgentAction({ isMainnet: true, agentAddress: agent.address, nonce: testNonce() }),
  );
  const mismatch = await sim.post("/exchange", { ...signed, nonce: signed.nonce + 1 });
  assert.equal((mismatch.body as { status: string }).status, "err");
  const withVault = await sim.post("/exchange", { ...signed, vaultAddress: user.address });
  assert.equal((withVault.body as { status: string }).status, "err");
  const agentRole = await sim.post("/info", { type: "userRole", user: agent.address });
  assert.deepEqual(agentRole.body, { role: "agent", data: { user: user.address } });
  assert.deepEqual((await sim.post("/info", { type: "userRole", user: user.address })).body, { role: "user" });
  assert.deepEqual((await sim.post("/info", { type: "userRole", user: generateAgentKey().address })).body, {
    role: "missing",
  });
});

Deno.test("VENUE_B simulator replaces, removes and expires agents as the venue does", async () => {
  let now = 1_800_000_000_000;
  await using sim = startSim({ now: () => now });
  const user = await fundedWallet(sim);
  const first = generateAgentKey();
  const second = generateAgentKey();
  const approve = (agentAddress: Hex, agentName: string, validUntil?: number) =>
    sendUser(sim, user, approveAgentAction({ isMainnet: true, agentAddress, agentName, validUntil, nonce: now++ }));
  const acts = async (agent: Wallet) =>
    ((await sendL1(sim, agent, { type: "noop" }, { nonce: now++ })).body as { status: string }).status;
  await approve(first.address, "bot");
  assert.equal(await acts(first), "ok");
  await approve(second.address, "bot");
  assert.equal(await acts(first), "err", "the same name replaces the previous agent");
  assert.equal(await acts(second), "ok");
  await approve("0x0000000000000000000000000000000000000000", "bot");
  assert.equal(await acts(second), "err", "the zero address removes the named agent");

  await approve(first.address, "");
  await approve(second.address, "");
  assert.equal(await acts(first), "err", "a new unnamed agent replaces the unnamed one");
  await approve(first.address, "short", now + 60_000);
  const agents = (await sim.post("/info", { type: "extraAgents", user: user.address })).body as {
    name: string;
    validUntil: number;
  }[];
  assert.deepEqual(agents.map((a) => a.name).sort(), ["", "short"]);
  assert.equal(await acts(first), "ok");
  now += 120_000;
  assert.equal(await acts(first), "err", "an expired agent is a stranger");
  for (const name of ["a", "b", "c"]) await approve(generateAgentKey().address, name);
  const fourth = await approve(generateAgentKey().address, "d");
  assert.equal((fourth.body as { status: string }).status, "err", "at most three named agents");
  assert.equal(((await approve(generateAgentKey().address, "x".repeat(17))).body as { status: string }).status, "err");
});

Deno.test("VENUE_B simulator prunes an agent whose master has no funds left, and the agent's nonces with it", async () => {
  let now = 1_800_000_000_000;
  await using sim = startSim({ now: () => now });
  const user = await fundedWallet(sim, "50");
  const payee = await fundedWallet(sim);
  const agent = generateAgentKey();
  await sendUser(
    sim,
    user,
    approveAgentAction({ isMainnet: true, agentAddress: agent.address, agentName: "bot", nonce: now++ }),
  );
  const listed = async () => (await sim.post("/info", { type: "extraAgents", user: user.address })).body as unknown[];
  const firstNonce = now++;
  assert.equal(
    ((await sendL1(sim, agent, { type: "noop" }, { nonce: firstNonce })).body as { status: string }).status,
    "ok",
  );
  assert.equal((await listed()).length, 1);

  // Everything sent away (to a funded wallet: no activation fee): the master has no funds, the agent is pruned.
  const drained = await sendUser(sim, user, {
    ...usdSendAction({ isMainnet: true, destination: payee.address, amount: "50", time: now++ }),
  });
  assert.equal((drained.body as { status: string }).status, "ok");
  const refused = await sendL1(sim, agent, { type: "noop" }, { nonce: now++ });
  assert.deepEqual(refused.body, { status: "err", response: `User or API Wallet ${agent.address} does not exist.` });
  assert.deepEqual(await listed(), []);
  await sim.control("POST", "/wallets", { address: user.address, usdc: "50" });
  assert.deepEqual(await listed(), [], "funded again, the pruned agent stays gone");

  // Its nonce set went with it: approving the same address again would let an old signed action replay.
  await sendUser(
    sim,
    user,
    approveAgentAction({ isMainnet: true, agentAddress: agent.address, agentName: "bot", nonce: now++ }),
  );
  const replay = await sendL1(sim, agent, { type: "noop" }, { nonce: firstNonce });
  assert.equal((replay.body as { status: string }).status, "ok", "the old nonce is taken again");
});

Deno.test("VENUE_B simulator records builder approvals and refuses builders without 100 USDC", async () => {
  await using sim = startSim();
  const user = await fundedWallet(sim);
  const approve = (maxFeeTenthsBps: number) =>
    sendUser(
      sim,
      user,
      approveBuilderFeeAction({ isMainnet: true, builder: BUILDER, maxFeeTenthsBps, nonce: testNonce() }),
    );
  assert.deepEqual((await approve(10)).body, {
    status: "err",
    response: "Builder has insufficient balance to be approved.",
  });
  await sim.control("POST", "/wallets", { address: BUILDER, usdc: "100" });
  assert.deepEqual((await approve(10)).body, { status: "ok", response: { type: "default" } });
  assert.equal((await sim.post("/info", { type: "maxBuilderFee", user: user.address, builder: BUILDER })).body, 10);
  assert.deepEqual((await sim.post("/info", { type: "approvedBuilders", user: user.address })).body, [BUILDER]);
  const order = { ...btcOrder("60000", "0.001"), builder: { b: BUILDER, f: 10 } };
  assert.ok(
    "resting" in
      ((await sendL1(sim, user, order)).body as { response: { data: { statuses: object[] } } }).response.data
        .statuses[0],
  );
  const mixedCase = "0xABCDEFabcdef0000000000000000000000000000";
  await sim.control("POST", "/wallets", { address: mixedCase, usdc: "100" });
  await sendUser(
    sim,
    user,
    approveBuilderFeeAction({ isMainnet: true, builder: mixedCase, maxFeeTenthsBps: 10, nonce: testNonce() }),
  );
  const upperBuilder = { ...btcOrder("60000", "0.001"), builder: { b: mixedCase, f: 10 } };
  assert.match(
    ((await sendL1(sim, user, upperBuilder)).body as { response: string }).response,
    /does not exist/,
    "an uppercase builder hashes differently",
  );
  await approve(0);
  assert.equal((await sim.post("/info", { type: "maxBuilderFee", user: user.address, builder: BUILDER })).body, 0);
  assert.deepEqual((await sendL1(sim, user, order)).body, {
    status: "err",
    response: "Builder fee has not been approved.",
  });
});

Deno.test("VENUE_B simulator sends USDC, charges the activation fee once, and refuses self-transfers", async () => {
  await using sim = startSim();
  const user = await fundedWallet(sim, "100");
  const fresh = generateAgentKey();
  const send = (destination: string, amount: string) =>
    sendUser(sim, user, {
      ...usdSendAction({ isMainnet: true, destination: fresh.address, amount, time: testNonce() }),
      destination: destination as Hex,
    });
  assert.deepEqual((await send(fresh.address, "10")).body, { status: "ok", response: { type: "default" } });
  // destination is signed as text, so a checksummed address verifies as sent.
  const mixed = `0x${fresh.address.slice(2).toUpperCase()}`;
  assert.deepEqual((await send(mixed, "5")).body, { status: "ok", response: { type: "default" } });
  assert.deepEqual((await send(user.address, "1")).body, { status: "err", response: "Cannot self-transfer." });
  const ledger = await sim.control<{ sends: { fee: string; amount: string; destination: string }[] }>(
    "GET",
    `/ledger?user=${user.address}`,
  );
  assert.deepEqual(ledger.sends.map((s) => [s.amount, s.fee, s.destination]), [["10.0", "1.0", fresh.address], [
    "5.0",
    "0.0",
    fresh.address,
  ]]);
  const state = (await sim.post("/info", { type: "clearinghouseState", user: user.address })).body as {
    withdrawable: string;
  };
  assert.equal(state.withdrawable, "84.0");
});

Deno.test("VENUE_B simulator control routes validate input and answer in their documented shapes", async () => {
  await using sim = startSim();
  const address = generateAgentKey().address;
  assert.deepEqual(await sim.control("POST", "/wallets", { address, usdc: "10000" }), { address, usdc: "10000.0" });
  assert.deepEqual(await sim.control("POST", "/wallets", { address, usdc: "5" }), { address, usdc: "10005.0" });
  assert.deepEqual(await sim.control("PUT", "/markets/ETH", { markPrice: "3100" }), {
    coin: "ETH",
    markPrice: "3100.0",
    bid: "3099.9",
    ask: "3100.1",
    depth: "50.0",
  });
  await assert.rejects(sim.control("PUT", "/markets/DOGE", { markPrice: "1" }), /Unknown coin/);
  await assert.rejects(sim.control("PUT", "/markets/ETH", { markPrice: "-1" }), /markPrice/);
  await assert.rejects(sim.control("PUT", "/faults", { mode: "BROKEN" }), /mode must be one of/);
  assert.deepEqual(await sim.control("PUT", "/faults", { mode: "SLOW" }), { mode: "SLOW", ms: 2000 });
  assert.deepEqual(await sim.control("PUT", "/faults", { mode: "NONE" }), { mode: "NONE", ms: 0 });
  assert.deepEqual(await sim.control("GET", `/ledger?user=${address}`), { user: address, sends: [] });
  assert.deepEqual(await sim.control("POST", "/funding", { coin: "BTC", rate: "0.0001" }), {
    coin: "BTC",
    rate: "0.0001",
    payments: 0,
  });
  await assert.rejects(sim.control("DELETE", `/agents/${address}`), /No approved agent/);
});

Deno.test("VENUE_B simulator faults: DOWN refuses all, LOSE_RESPONSE keeps the action and drops the answer", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  await sim.control("PUT", "/faults", { mode: "DOWN" });
  assert.equal((await sim.post("/info", { type: "meta" })).status, 503);
  assert.equal((await sendL1(sim, wallet, { type: "noop" })).status, 503);
  await sim.control("PUT", "/faults", { mode: "LOSE_RESPONSE" });
  assert.equal((await sim.post("/info", { type: "meta" })).status, 200, "reads still answer");
  const lost = await sendL1(sim, wallet, btcOrder("60000", "0.001", { c: "0x000000000000000000000000000000ff" }));
  assert.equal(lost.status, 503);
  await sim.control("PUT", "/faults", { mode: "NONE" });
  const status =
    (await sim.post("/info", { type: "orderStatus", user: wallet.address, oid: "0x000000000000000000000000000000ff" }))
      .body as {
        order: { status: string };
      };
  assert.equal(status.order.status, "open");
  assert.equal(
    orderError(await sendL1(sim, wallet, btcOrder("60000", "0.001", { c: "0x000000000000000000000000000000ff" }))),
    "Duplicate cloid.",
  );
});

Deno.test("VENUE_B simulator's dead man's switch cancels every open order when it fires", async () => {
  let now = 1_800_000_000_000;
  await using sim = startSim({ now: () => now });
  const wallet = await fundedWallet(sim);
  await sendL1(sim, wallet, btcOrder("60000", "0.001", { c: "0x000000000000000000000000000000aa" }), { nonce: now++ });
  assert.equal(
    ((await sendL1(sim, wallet, { type: "scheduleCancel", time: now + 1000 }, { nonce: now++ })).body as {
      status: string;
    }).status,
    "err",
  );
  await sendL1(sim, wallet, { type: "scheduleCancel", time: now + 10_000 }, { nonce: now++ });
  now += 11_000;
  await sendL1(sim, wallet, { type: "noop" }, { nonce: now++ });
  const status =
    (await sim.post("/info", { type: "orderStatus", user: wallet.address, oid: "0x000000000000000000000000000000aa" }))
      .body as {
        order: { status: string };
      };
  assert.equal(status.order.status, "scheduledCancel");
});

Deno.test("VENUE_B simulator: a fired market trigger is `triggered` under its own oid and cloid, then fills under them", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  const cloid = "0x000000000000000000000000000000c1";
  const status = async () =>
    (await sim.post("/info", { type: "orderStatus", user: wallet.address, oid: cloid })).body as {
      order: { order: { oid: number; isTrigger: boolean; orderType: string; cloid: string }; status: string };
    };
  assert.equal((await sendL1(sim, wallet, btcOrder("66000", "0.01", { t: { limit: { tif: "Ioc" } } }))).status, 200);
  const stop = await sendL1(sim, wallet, {
    type: "order",
    orders: [{
      a: 0,
      b: false,
      p: "60000",
      s: "0.01",
      r: true,
      t: { trigger: { isMarket: true, triggerPx: "64000", tpsl: "sl" } },
      c: cloid,
    }],
    grouping: "na",
  });
  const oid = (stop.body as { response: { data: { statuses: { resting: { oid: number } }[] } } }).response.data
    .statuses[0].resting.oid;
  assert.deepEqual(await sim.control("PUT", "/trigger-hold", { hold: true }), { hold: true, held: 0 });
  await sim.control("PUT", "/markets/BTC", { markPrice: "63900" });
  const fired = await status();
  assert.deepEqual(
    [fired.order.status, fired.order.order.oid, fired.order.order.cloid, fired.order.order.isTrigger],
    ["triggered", oid, cloid, true],
  );
  assert.equal(fired.order.order.orderType, "Stop Market");
  // Awaiting execution: not an open order any more, not cancellable, the position still open.
  assert.deepEqual((await sim.post("/info", { type: "frontendOpenOrders", user: wallet.address })).body, []);
  const cancel = await sendL1(sim, wallet, { type: "cancelByCloid", cancels: [{ asset: 0, cloid }] });
  assert.equal(orderError(cancel), "Order was never placed, already canceled, or filled.");
  assert.deepEqual(await sim.control("PUT", "/trigger-hold", { hold: false }), { hold: false, held: 0 });
  assert.equal((await status()).order.status, "filled");
  const fills = (await sim.post("/info", { type: "userFills", user: wallet.address })).body as {
    oid: number;
    cloid?: string;
    side: string;
  }[];
  assert.deepEqual([fills[0].oid, fills[0].cloid, fills[0].side], [oid, cloid, "A"]);
});

Deno.test("VENUE_B simulator: a modify without `a` turns a GTC into an ALO; with `a: true` it takes as a GTC", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  const cloid = "0x000000000000000000000000000000d1";
  const status = async () =>
    ((await sim.post("/info", { type: "orderStatus", user: wallet.address, oid: cloid })).body as {
      order: { order: { limitPx: string }; status: string };
    }).order;
  assert.equal((await sendL1(sim, wallet, btcOrder("64000", "0.01", { c: cloid }))).status, 200);
  const crossing = { a: 0, b: true, p: "66000", s: "0.01", r: false, t: { limit: { tif: "Gtc" } }, c: cloid };
  const refused = await sendL1(sim, wallet, { type: "modify", oid: cloid, order: crossing });
  assert.match(
    (refused.body as { response: string }).response,
    /^Post only order would have immediately matched, bbo was /,
  );
  assert.deepEqual([(await status()).status, (await status()).order.limitPx], ["open", "64000.0"]);
  // One that rests is placed, its GTC overridden to ALO.
  const resting = { ...crossing, p: "64500" };
  assert.equal((await sendL1(sim, wallet, { type: "modify", oid: cloid, order: resting })).status, 200);
  const moved = (await sim.post("/info", { type: "orderStatus", user: wallet.address, oid: cloid })).body as {
    order: { order: { limitPx: string; tif: string }; status: string };
  };
  assert.deepEqual([moved.order.status, moved.order.order.limitPx, moved.order.order.tif], ["open", "64500.0", "Alo"]);
  const placed = await sendL1(sim, wallet, { type: "modify", oid: cloid, order: crossing, a: true });
  assert.equal((placed.body as { status: string }).status, "ok");
  assert.equal((await status()).status, "filled");
  const fills = (await sim.post("/info", { type: "userFills", user: wallet.address })).body as { cloid: string }[];
  assert.deepEqual(fills.map((fill) => fill.cloid), [cloid]);
});

Deno.test("VENUE_B simulator: batchModify's `a: true` applies to every modify in it, as the SDK's batchModify says", async () => {
  await using sim = startSim();
  const wallet = await fundedWallet(sim);
  const cloid = "0x000000000000000000000000000000d2";
  assert.equal((await sendL1(sim, wallet, btcOrder("64000", "0.01", { c: cloid }))).status, 200);
  const crossing = { a: 0, b: true, p: "66000", s: "0.01", r: false, t: { limit: { tif: "Gtc" } }, c: cloid };
  const held = await sendL1(sim, wallet, { type: "batchModify", modifies: [{ oid: cloid, order: crossing }] });
  const refusal = (held.body as { response: { data: { statuses: { error?: string }[] } } }).response.data.statuses[0];
  assert.match(refusal.error ?? "", /^Post only order would have immediately matched/, "without `a`: held to ALO");
  const placed = await sendL1(sim, wallet, {
    type: "batchModify",
    modifies: [{ oid: cloid, order: crossing }],
    a: true,
  });
  assert.equal((placed.body as { status: string }).status, "ok");
  const order = ((await sim.post("/info", { type: "orderStatus", user: wallet.address, oid: cloid })).body as {
    order: { status: string };
  }).order;
  assert.equal(order.status, "filled", "with `a: true` the replacement takes as the GTC it is");
});
