/**
 * What the venue fault tests share: a trading client on the VENUE_A
 * simulator, the simulator's fault switch, the simulator's own record of
 * every order (the ground truth for "nothing was sent twice"), and a link in
 * front of the simulator that fails one kind of request at a time.
 */
import assert from "node:assert/strict";
import { expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import type { TestEnv } from "../_helpers/env.ts";
import {
  automationBody,
  BTC_POLICY,
  completeSetup,
  putAutomation,
  putSetup,
  readyClient,
  TREND_FOLLOW,
} from "../setup/setup_fixture.ts";
import { connectWallet, openPage, walletSetUp } from "../connect/connect_fixture.ts";
import { createVenueAAdapter } from "../../venues/venue_a/adapter.ts";

export type FaultMode = "NONE" | "DOWN" | "SLOW" | "LOSE_RESPONSE" | "REJECT_KEYS";

/** Switch a simulator's fault (`ms`: the delay of SLOW). */
export async function venueFault(env: TestEnv, venue: "venueA" | "venueB", mode: FaultMode, ms?: number) {
  const response = await fetch(`${env.venueUrls[venue]}/_control/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ mode, ...(ms === undefined ? {} : { ms }) }),
  });
  assert.equal(response.status, 200, await response.text());
}

/** Every order and conditional (algo) order the VENUE_A simulator holds for a key, whatever its state. */
export async function ordersAtVenueA(env: TestEnv, apiKey: string) {
  const response = await fetch(`${env.venueUrls.venueA}/_control/accounts/${apiKey}`);
  const account = await response.json();
  assert.equal(response.status, 200, JSON.stringify(account));
  return account as {
    orders: { clientOrderId: string; status: string }[];
    algoOrders: { clientAlgoId: string; algoStatus: string; orderType: string }[];
    positions: { positionAmt: string }[];
  };
}

/** ana trading on VENUE_A: ready client, complete setup, automation on, account reconciled once. */
export async function tradingClient() {
  const ready = await readyClient();
  await expectJson(await putSetup(ready.partner, completeSetup({ orderSizeUsd: 240, maxLossPerTrade: 50 })), 200);
  await expectJson(await putAutomation(ready.partner, automationBody()), 200);
  await runJob(ready.env, "reconcile");
  return ready;
}

/** ana trading on VENUE_B: her wallet connected through the page (agent approved, builder fee approved). */
export async function tradingClientB() {
  const { env, partner, wallet } = await walletSetUp(25);
  await connectWallet((await openPage(env, partner)).request, wallet);
  await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW), 200);
  await expectJson(await operator(env, "PUT", "/operator/v1/asset-policies/VENUE_B/BTCUSDC", BTC_POLICY), 200);
  await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_B", { realExecution: true }), 200);
  const setup = completeSetup({ providerId: "VENUE_B", orderSizeUsd: 240, maxLossPerTrade: 50 });
  await expectJson(await putSetup(partner, setup), 200);
  await expectJson(await putAutomation(partner, automationBody({ providerId: "VENUE_B" })), 200);
  await runJob(env, "reconcile");
  return { env, partner, wallet };
}

export async function runJob(env: TestEnv, job: string) {
  return (await expectJson(await operator(env, "POST", `/operator/v1/jobs/${job}/run`), 200)).summary;
}

/**
 * How one kind of request fails on the way to the venue:
 * - `UNREACHABLE`: the venue's "Service Unavailable." answer, the request never reaching its core;
 * - `ANSWER_LOST`: the venue acts, and its answer is replaced by a 503 that proves nothing;
 * - `ANSWER_HELD`: the venue acts, and its answer is held until the caller gives up waiting.
 */
export type LinkFault = "UNREACHABLE" | "ANSWER_LOST" | "ANSWER_HELD";

/**
 * A real HTTP hop between the service and the VENUE_A simulator, standing for
 * the network and the venue's gateway. The simulator's own fault switch hits
 * every request; this fails one kind only (say, placing an order while the
 * account and book reads before it pass), which is how an entry meets a fault
 * in the middle. Everything else goes through untouched, to the simulator.
 */
export class VenueLink {
  readonly url: string;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #faults = new Map<string, LinkFault>();
  readonly #held: (() => void)[] = [];

  constructor(readonly target: string) {
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => this.#pass(request));
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Fail every `method path` request (path without the query) this way until `heal()`. */
  fail(method: string, path: string, fault: LinkFault): void {
    this.#faults.set(`${method} ${path}`, fault);
  }

  /** Answers being held (ANSWER_HELD) right now: the venue has acted on each. */
  get held(): number {
    return this.#held.length;
  }

  heal(): void {
    this.#faults.clear();
    for (const release of this.#held.splice(0)) release();
  }

  async #pass(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const fault = this.#faults.get(`${request.method} ${url.pathname}`);
    if (fault === "UNREACHABLE") return Response.json({ msg: "Service Unavailable." }, { status: 503 });
    const answer = await fetch(`${this.target}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.body ? await request.arrayBuffer() : undefined,
    });
    const body = await answer.arrayBuffer();
    if (fault === "ANSWER_LOST") {
      return Response.json({ msg: "Unknown error, please check your request." }, { status: 503 });
    }
    if (fault === "ANSWER_HELD") {
      // Held until the link heals or closes, long after the caller stopped waiting: nothing reaches it.
      await new Promise<void>((resolve) => this.#held.push(resolve));
      return new Response(null, { status: 504 });
    }
    return new Response(body, { status: answer.status, headers: answer.headers });
  }

  close(): Promise<void> {
    this.heal();
    return this.#server.shutdown();
  }
}

/**
 * Route the service's VENUE_A adapter through a new link (as VENUE_A_URL
 * would), with its per-request timeout. Set up after the account is connected:
 * the spot host, used only to check a key at connection, is not behind it.
 */
export function linkVenueA(env: TestEnv, options: { timeoutMs?: number } = {}): VenueLink {
  const link = new VenueLink(env.venueUrls.venueA);
  env.deps.venues.VENUE_A = createVenueAAdapter({
    baseUrl: link.url,
    spotBaseUrl: link.url,
    secrets: env.deps.secrets,
    budget: env.deps.egressBudgets.VENUE_A,
    timeoutMs: options.timeoutMs,
  });
  return link;
}

/** ana's positions' protection statuses, as the partner reads them. */
export async function protectionOf(partner: TestPartner): Promise<string[]> {
  return (await expectJson(await partner.call("GET", "/v1/users/ana/execution-status"), 200)).positions
    .map((p: { protection: { status: string } }) => p.protection.status);
}

/** The venue holds one entry order and its stop and two targets, each once, and the position is PROTECTED. */
export async function assertProtectedOnce(env: TestEnv, partner: TestPartner, apiKey: string): Promise<void> {
  const atVenue = await ordersAtVenueA(env, apiKey);
  assert.equal(atVenue.orders.length, 1, "one entry order ever reached the venue");
  assert.equal(atVenue.algoOrders.length, 3, "one stop and two targets, each once");
  assert.deepEqual(await protectionOf(partner), ["PROTECTED"]);
}
