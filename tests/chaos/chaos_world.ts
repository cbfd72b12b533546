/**
 * The world the crash harness drives: the service as its own process (killed
 * and restarted over and over on one database file), and everything that
 * outlives it as real counterparts do — both venue simulators in a process of
 * their own, an EVM node with a stablecoin for payments, and the partner's
 * webhook receiver, which refuses some deliveries so retries happen too.
 *
 * Requests go through `WatchedService.fetch`, so each stop (every kill)
 * checks that the service's output holds none of the secrets seen.
 */
import type { Hex } from "viem";
import { openDatabase } from "../../db/client.ts";
import type { Database } from "../../db/client.ts";
import { partnerBody } from "../_helpers/http.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { startChain, type TestChain } from "../_helpers/evm/chain.ts";
import { startSimulatorProcess } from "../bench/simulator_process.ts";
import { billingContract } from "../performance/trade_fixture.ts";
import { BTC_POLICY, TREND_FOLLOW } from "../setup/setup_fixture.ts";
import { type Random, randomOf } from "./random.ts";

export const PARTNER_ID = "chaos";
const OPERATOR_TOKEN = "chaos-operator-token-0123456789abcdef0123";
/** Where the platform is paid on chain (operator configuration). */
export const RECIPIENT = "0x00000000000000000000000000000000000fee01";
/** anvil's development wallet that pays the clients' obligations. */
export const PAYER_WALLET = 1;

/** What the steps share between kills: who is onboarded, the market, the business clock, payments made on chain. */
export class Scenario {
  readonly users: string[] = [];
  markPrice = 65_000;
  clock = Date.now();
  signals = 0;
  /** A signal whose POST the kill cut: its source sends it again. */
  unansweredSignal?: Record<string, unknown>;
  /** Payments whose transfer is on chain: each must end CONFIRMED, credited once. */
  readonly transfers = new Map<string, { user: string; txHash: Hex }>();
}

/** An answer read whole: status, raw text (to compare replays byte for byte) and parsed JSON. */
export interface Answer {
  status: number;
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A mutation sent with an Idempotency-Key and answered: its replay must answer the very same. */
export interface Acknowledged {
  method: string;
  path: string;
  body: unknown;
  key: string;
  answer: Answer;
  /** The business clock when answered: the stored answer is kept 24 hours of it. */
  answeredAt: number;
}

type Sent = Omit<Acknowledged, "answer" | "answeredAt">;

/** What the partner's endpoint received: each event id and how many times (a retry may repeat one). */
export class WebhookReceiver {
  readonly received = new Map<string, number>();
  /** Share of deliveries answered 500, so the retry schedule runs too. */
  failureRate = 0.2;
  readonly url: string;
  readonly #server: Deno.HttpServer;

  constructor(random: Random) {
    const port = freePort();
    this.url = `http://127.0.0.1:${port}/hooks`;
    this.#server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
      const event = await request.json();
      if (random.next() < this.failureRate) return new Response("try later", { status: 500 });
      this.received.set(event.eventId, (this.received.get(event.eventId) ?? 0) + 1);
      return new Response(null, { status: 204 });
    });
  }

  stop(): Promise<void> {
    return this.#server.shutdown();
  }
}

export class ChaosWorld {
  service!: WatchedService;
  readonly acknowledged: Acknowledged[] = [];
  /** Idempotent requests a kill left without an answer. */
  readonly interrupted: Sent[] = [];
  readonly scenario = new Scenario();
  readonly eventsBeforeWebhook = new Set<string>();
  /** Events in the partner's feed at the last check. */
  feedSize = 0;
  /** Each user's own simulator account (API key and secret), by externalUserId. */
  readonly venueKeys = new Map<string, { apiKey: string; apiSecret: string }>();
  readonly databaseUrl: string;
  #partnerAuthorization = "";
  /** Every secret handled so far, watched in the output of each service process in turn. */
  readonly #secrets: [string, string][] = [];
  #keys = 0;

  private constructor(
    readonly random: Random,
    readonly dir: string,
    readonly simulators: Awaited<ReturnType<typeof startSimulatorProcess>>,
    readonly chain: TestChain,
    readonly token: Hex,
    readonly receiver: WebhookReceiver,
    readonly env: Record<string, string> & { PORT: string },
  ) {
    this.databaseUrl = env.DATABASE_URL;
  }

  static async start(seed: number): Promise<ChaosWorld> {
    const random = randomOf(seed);
    const dir = await Deno.makeTempDir({ prefix: "svc-chaos-" });
    const [simulators, chain] = await Promise.all([startSimulatorProcess(), startChain(42161)]);
    const token = await chain.deployToken("USDT", 6);
    await chain.mint(token, chain.wallet(PAYER_WALLET).address, 1_000_000n * 10n ** 6n);
    const venues = simulators.urls;
    const world = new ChaosWorld(random, dir, simulators, chain, token, new WebhookReceiver(random), {
      PORT: String(freePort()),
      DATABASE_URL: `file:${dir}/service.db`,
      OPERATOR_TOKEN,
      // The partner's webhook receiver runs on this machine.
      OUTBOUND_ALLOW_LOOPBACK: "true",
      MASTER_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(9))),
      VENUE_A_URL: venues.venueA,
      VENUE_A_SPOT_URL: venues.venueASpot,
      VENUE_B_URL: venues.venueB,
      EVM_RPC_ARBITRUM: chain.url,
      EVM_TOKENS: JSON.stringify({ arbitrum: { USDT: token } }),
      EVM_CONFIRMATIONS: JSON.stringify({ arbitrum: 1 }),
      // Crashes are under test here, not the venues' request budgets (tests/venues covers those): both lifted.
      VENUE_A_IP_WEIGHT_PER_MINUTE: "100000000",
      LOG_LEVEL: "error",
    });
    await world.restart();
    await world.#setUp();
    return world;
  }

  /** A partner trading trend-follow on VENUE_A, weekly fees, a webhook endpoint and an on-chain recipient. */
  async #setUp(): Promise<void> {
    // First, before the service reads (and caches) the venue's published limits.
    await this.simulator("PUT", "/limits", {
      requestWeightPerMinute: 100_000_000,
      ordersPer10Seconds: 1_000_000,
      ordersPerMinute: 1_000_000,
    });
    const created = await this.operator("POST", "/operator/v1/partners", {
      ...partnerBody({ partnerId: PARTNER_ID }),
      // Each profitable week owes a fee (no loss carried over): obligations, and payments, come often.
      contract: billingContract({ performancePeriod: "WEEKLY", carryPolicy: "NO_CARRY", dueDays: 90 }),
      limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 },
    });
    if (created.status !== 201) throw new Error(`partner: ${created.text}`);
    const { clientId, clientSecret } = created.body.credential;
    this.#watch("clientSecret", clientSecret);
    this.#partnerAuthorization = `Basic ${btoa(`${clientId}:${clientSecret}`)}`;
    for (
      const [method, path, body] of [
        ["PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW],
        ["PUT", "/operator/v1/asset-policies/VENUE_A/BTCUSDT", { ...BTC_POLICY, maxBookFraction: 1 }],
        ["PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }],
        ["PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT }],
      ] as const
    ) {
      const answer = await this.operator(method, path, body);
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.text}`);
    }
    // Events before the endpoint's registration are not pushed.
    const feed = await this.partner("GET", "/v1/events?limit=500");
    for (const event of feed.body.events) this.eventsBeforeWebhook.add(event.eventId);
    const registered = await this.operator("PUT", `/operator/v1/partners/${PARTNER_ID}/webhook`, {
      url: this.receiver.url,
    });
    if (registered.status !== 200) throw new Error(`webhook: ${registered.text}`);
    this.#watch("signingSecret", registered.body.signingSecret);
    await this.#readMarkets();
    await this.simulator("PUT", "/markets/BTCUSDT", { markPrice: "65000", depth: "1000" });
  }

  /** A new service process on the same database, once it answers. */
  async restart(): Promise<void> {
    this.service = new WatchedService(this.env);
    for (const [name, value] of this.#secrets) this.service.secrets.add(name, value);
    try {
      await waitUntilUp(this.service.url);
    } catch (error) {
      // A start that fails after a crash is itself a finding: say what the service said.
      const { status, stderr } = await this.service.stop("SIGKILL");
      throw new Error(`${error} (exit ${status.code}): ${stderr.split("\n").slice(-8).join("\n")}`);
    }
    await this.#readMarkets();
  }

  /**
   * The adapter learns the venue's published (here lifted) limits from its
   * market rules, and budgets by the default ones until it has read them.
   * The venue reports the weight its IP spent this minute, the killed
   * processes' included: when a read at start (the account pushes' keeper,
   * a job) sees more than the default limit allows, the adapter holds every
   * request, the market rules' read too, until the minute turns; and once the
   * world has grown, the reconcile job the scheduler starts at each minute
   * spends the default minute again within seconds. Asked often enough to be
   * among the first requests of a minute.
   */
  async #readMarkets(): Promise<void> {
    if (!this.#partnerAuthorization) return; // the first start: the partner is not there yet
    const until = Date.now() + 180_000;
    for (;;) {
      const read = await this.partner("GET", "/v1/markets?providerId=VENUE_A");
      if (read.status === 200) return;
      if (Date.now() > until) throw new Error(`markets: ${read.text}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  #watch(name: string, value: string): void {
    this.#secrets.push([name, value]);
    this.service.secrets.add(name, value);
  }

  /** SIGKILL, then the output's secret check; the process is gone when this answers. */
  async kill(): Promise<void> {
    await this.service.stop("SIGKILL");
  }

  nextKey(purpose: string): string {
    return `chaos-${purpose}-${++this.#keys}-${Math.floor(this.random.next() * 1e9)}`;
  }

  async #request(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
    const response = await this.service.fetch(path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: response.status, text, body: parsed };
  }

  operator(method: string, path: string, body?: unknown): Promise<Answer> {
    return this.#request(method, path, { authorization: `Bearer ${OPERATOR_TOKEN}` }, body);
  }

  partner(method: string, path: string, body?: unknown): Promise<Answer> {
    return this.#request(method, path, { authorization: this.#partnerAuthorization }, body);
  }

  /**
   * A partner mutation under a fresh Idempotency-Key, remembered once answered
   * for the replay check; one the kill cut is kept to be sent again, as a
   * partner retries a request that got no answer.
   */
  async idempotent(method: string, path: string, body: unknown, purpose: string): Promise<Answer> {
    const sent = { method, path, body, key: this.nextKey(purpose) };
    try {
      const answer = await this.replay(sent);
      if (answer.status < 500) this.acknowledged.push({ ...sent, answer, answeredAt: this.scenario.clock });
      return answer;
    } catch (error) {
      this.interrupted.push(sent);
      throw error;
    }
  }

  /**
   * Send again, under their keys, the requests a kill left unanswered. One
   * still leased by the dead process (IDEMPOTENCY_IN_PROGRESS, 30 s) waits for
   * a later recovery; the first real answer is what every replay must match.
   */
  async retryInterrupted(): Promise<void> {
    const waiting = this.interrupted.splice(0);
    for (const sent of waiting) {
      const answer = await this.replay(sent);
      if (answer.status === 409 && answer.body?.error?.code === "IDEMPOTENCY_IN_PROGRESS") this.interrupted.push(sent);
      else if (answer.status < 500) this.acknowledged.push({ ...sent, answer, answeredAt: this.scenario.clock });
    }
  }

  /** The request (again) under its key. */
  replay(sent: Sent): Promise<Answer> {
    return this.#request(sent.method, sent.path, {
      authorization: this.#partnerAuthorization,
      "idempotency-key": sent.key,
    }, sent.body);
  }

  /** The hosted page's API (no partner credential: the token or ticket is the authority). */
  page(path: string, body: unknown, ticket?: string): Promise<Answer> {
    return this.#request("POST", path, ticket ? { authorization: `Bearer ${ticket}` } : {}, body);
  }

  /** VENUE_A simulator control (outside the service). */
  async simulator(method: string, path: string, body?: unknown) {
    const response = await fetch(`${this.simulators.urls.venueA}/_control${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`simulator ${method} ${path}: ${JSON.stringify(answer)}`);
    return answer;
  }

  /** A funded simulator account for a user, its secret watched in the service's output from now on. */
  async newVenueAccount(user: string): Promise<{ apiKey: string; apiSecret: string }> {
    const created = await this.simulator("POST", "/accounts", { balances: { USDT: "100000" } });
    const keys = { apiKey: created.apiKey as string, apiSecret: created.apiSecret as string };
    this.#watch("apiSecret", keys.apiSecret);
    this.venueKeys.set(user, keys);
    return keys;
  }

  /** The database, opened beside the service (or while it is down) for the invariant checks. */
  openDatabase(): Promise<Database> {
    return openDatabase(this.databaseUrl);
  }

  /** Stop everything; the data directory is removed unless kept for a look at what went wrong. */
  async close(options: { keepData?: boolean } = {}): Promise<void> {
    await this.service.stop("SIGTERM").catch(() => {});
    await Promise.all([this.simulators.stop(), this.chain.stop(), this.receiver.stop()]);
    if (!options.keepData) await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
