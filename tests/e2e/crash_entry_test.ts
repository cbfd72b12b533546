/**
 * A process killed in the middle of an entry duplicates nothing: the service
 * (its own process) records the intent, sends it to the simulators (their own
 * process, so the venue outlives the crash) and is killed with SIGKILL while
 * the venue still holds the request. After a restart the reconcile job finds
 * the order by its client order id, the position is protected, and asking
 * again for the same intent answers it instead of sending a second order.
 */
import assert from "node:assert/strict";
import { partnerBody } from "../_helpers/http.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { BTC_POLICY, completeSetup, TREND_FOLLOW } from "../setup/setup_fixture.ts";
import { opening } from "../execution/execution_fixture.ts";

const SIMULATORS = new URL("../../venues/sim/main.ts", import.meta.url).pathname;
const TOKEN = "crash-entry-operator-token-0123456789abcdef";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("an entry interrupted by SIGKILL is found by reconciliation after a restart, never sent twice", async () => {
  const simPort = freePort();
  const simulators = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SIMULATORS],
    env: { PORT: String(simPort), NO_COLOR: "1" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const sim = `http://127.0.0.1:${simPort}/sim`;
  const dir = await Deno.makeTempDir({ prefix: "svc-crash-entry-" });
  const env = {
    PORT: String(freePort()),
    DATABASE_URL: `file:${dir}/service.db`,
    OPERATOR_TOKEN: TOKEN,
    MASTER_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(5))),
    VENUE_A_URL: `${sim}/venue-a`,
    VENUE_A_SPOT_URL: `${sim}/venue-a-spot`,
    VENUE_B_URL: `${sim}/venue-b`,
    LOG_LEVEL: "error",
  };
  let service = new WatchedService(env);
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (
        await fetch(`${sim}/venue-a/fapi/v1/ping`).then((r) => r.body?.cancel().then(() => r.ok)).catch(() => false)
      ) {
        break;
      }
      await sleep(100);
    }
    await waitUntilUp(service.url);
    const json = (body: unknown) => ({ "content-type": "application/json", body: JSON.stringify(body) });
    const asOperator = (method: string, path: string, body?: unknown) =>
      service.fetch(path, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const created = await (await asOperator("POST", "/operator/v1/partners", partnerBody({ partnerId: "crash" })))
      .json();
    const authorization = `Basic ${btoa(`${created.credential.clientId}:${created.credential.clientSecret}`)}`;
    const asPartner = (method: string, path: string, body?: unknown, key?: string) =>
      service.fetch(path, {
        method,
        headers: {
          authorization,
          "content-type": "application/json",
          ...(key ? { "idempotency-key": key } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    assert.equal((await asOperator("PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW)).status, 200);
    assert.equal((await asOperator("PUT", "/operator/v1/asset-policies/VENUE_A/BTCUSDT", BTC_POLICY)).status, 200);
    assert.equal((await asOperator("PUT", "/operator/v1/providers/VENUE_A", { realExecution: true })).status, 200);
    assert.equal((await asPartner("POST", "/v1/users", { externalUserId: "ana" }, "crash-user-1")).status, 201);

    // Connect through the hosted page's API with a simulator key.
    const session = await (await asPartner("POST", "/v1/users/ana/connect-sessions", { providerId: "VENUE_A" }))
      .json();
    const token = session.connectUrl.split("#t=")[1];
    const page = await (await service.fetch("/connect/api/session", { method: "POST", ...headersOf(json({ token })) }))
      .json();
    const keys = await (await fetch(`${sim}/venue-a/_control/accounts`, {
      method: "POST",
      ...headersOf(json({ balances: { USDT: "10000" } })),
    })).json();
    service.secrets.add("apiSecret", keys.apiSecret);
    const connected = await service.fetch("/connect/api/api-key", {
      method: "POST",
      headers: { authorization: `Bearer ${page.ticket}`, "content-type": "application/json" },
      body: JSON.stringify(keys),
    });
    assert.equal(connected.status, 200, await connected.text());
    assert.equal(
      (await asPartner("PUT", "/v1/users/ana/setup", completeSetup({ maxMarginPerTradeUsd: 100 }), "crash-setup-1"))
        .status,
      200,
    );

    // Markets are read (and cached) and the account reconciled once before the venue slows down.
    assert.equal((await asPartner("GET", "/v1/markets?providerId=VENUE_A")).status, 200);
    assert.equal((await asOperator("POST", "/operator/v1/jobs/reconcile/run")).status, 200);
    // Every venue request now waits 5 s: the service dies while its order is on the way.
    await fetch(`${sim}/venue-a/_control/faults`, { method: "PUT", ...headersOf(json({ mode: "SLOW", ms: 5000 })) })
      .then((r) => r.body?.cancel());
    const order = opening({ intentId: "crash-entry-1", takeProfits: [{ price: 67000, share: 1 }] });
    const inFlight = asPartner("POST", "/v1/orders/execute", order, "crash-exec-1").catch(() => null);
    // Killed as soon as the intent is recorded, that is, while its order is on its way to the venue.
    // (The checks before it read the account and the book, each held 5 s by the venue.)
    for (let attempt = 0; attempt < 600; attempt++) {
      const read = await asPartner("GET", "/v1/orders/crash-entry-1?externalUserId=ana&providerId=VENUE_A");
      await read.body?.cancel();
      if (read.status === 200) break;
      await sleep(50);
    }
    await sleep(2200);
    service.kill("SIGKILL");
    await service.child.status;
    await inFlight;
    await fetch(`${sim}/venue-a/_control/faults`, { method: "PUT", ...headersOf(json({ mode: "NONE" })) })
      .then((r) => r.body?.cancel());
    // Whatever the venue still held is processed; then the venue's action window (6 s) passes, so a query is final.
    await sleep(8000);

    service = new WatchedService(env);
    await waitUntilUp(service.url);
    const before = await (await asPartner("GET", "/v1/orders/crash-entry-1?externalUserId=ana&providerId=VENUE_A"))
      .json();
    assert.equal(before.status, "SUBMITTING", "recorded before the send, outcome unknown after the crash");
    const job = await (await asOperator("POST", "/operator/v1/jobs/reconcile/run")).json();
    assert.equal(job.summary.intentsChecked >= 1, true, JSON.stringify(job));
    const after = await (await asPartner("GET", "/v1/orders/crash-entry-1?externalUserId=ana&providerId=VENUE_A"))
      .json();
    // The kill fell either after the venue took the order (found: FILLED) or before (never there: NOT_PLACED).
    assert.ok(["FILLED", "NOT_PLACED"].includes(after.status), after.status);

    // Asking again for the same intent answers the order the venue has, or sends the one it never took, once.
    const again = await (await asPartner("POST", "/v1/orders/execute", order, "crash-exec-2")).json();
    assert.equal(again.execution.status, "FILLED", JSON.stringify(again));
    if (after.status === "FILLED") assert.equal(again.execution.orderId, after.orderId, "nothing sent again");
    await (await asOperator("POST", "/operator/v1/jobs/reconcile/run")).body?.cancel();
    const positions = await (await asPartner("GET", "/v1/users/ana/positions?providerId=VENUE_A")).json();
    assert.deepEqual(positions.positions.map((p: { quantity: number }) => p.quantity), [0.003], "one order, once");
    const status = await (await asPartner("GET", "/v1/users/ana/execution-status")).json();
    assert.deepEqual(status.positions.map((p: { protection: { status: string } }) => p.protection.status), [
      "PROTECTED",
    ]);
  } finally {
    await service.stop("SIGTERM");
    simulators.kill("SIGTERM");
    await simulators.status;
    await Deno.remove(dir, { recursive: true });
  }
});

function headersOf(init: { "content-type": string; body: string }) {
  return { headers: { "content-type": init["content-type"] }, body: init.body };
}
