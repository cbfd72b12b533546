/**
 * The service, started with the standard OTEL_* variables pointing at a
 * loopback OTLP receiver, traces a signal end to end: the operator's
 * `POST /operator/v1/signals` is an ancestor of the fan-out span, which is
 * the ancestor of one venue-call span per order sent (the entry, its stop,
 * its targets). Metrics and logs arrive too, and nothing the receiver got
 * holds a secret the test handled.
 *
 * Everything goes through HTTP, as the walkthrough (docs/walkthrough.md) does:
 * a partner, a VENUE_A account connected with the QA test key on the hosted
 * page's API, a setup, the automation, a reconcile run, then the signal.
 */
import assert from "node:assert/strict";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { OtlpReceiver, type ReceivedSpan } from "./otlp_receiver.ts";

const JSON_TYPE = { "content-type": "application/json" };
const USER = "user-otel";
const SIGNAL_ID = "otel-0001";

Deno.test("a signal's trace links the operator call, the fan-out and each venue order; metrics and logs arrive, no secret does", async () => {
  const receiver = new OtlpReceiver();
  const home = await Deno.makeTempDir({ prefix: "svc-otlp-" });
  const service = new WatchedService({
    PORT: String(freePort()),
    HOST: "127.0.0.1",
    DATABASE_URL: `file:${home}/data/service.db`,
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "partner-service-test",
    OTEL_METRIC_EXPORT_INTERVAL: "500",
  });
  try {
    await waitUntilUp(service.url);
    const operatorToken = (await Deno.readTextFile(`${home}/data/operator_token`)).trim();
    service.secrets.add("operator token", operatorToken);
    const calls = new Calls(service, operatorToken);
    await tradeOneSignal(calls);

    const operatorSpan = () =>
      receiver.spans.find((span) =>
        span.name === "POST /operator/v1/signals" && span.attributes["http.route"] === "/operator/v1/signals"
      );
    const fanout = () => receiver.spans.find((span) => span.name === "engine.fanout");
    const orders = () => orderSpans(receiver.spans, fanout());
    await receiver.waitFor("the signal's spans", () => !!operatorSpan() && !!fanout() && orders().length >= 3);

    const signalSpan = operatorSpan()!;
    const fanoutSpan = fanout()!;
    assert.equal(fanoutSpan.attributes["signal.id"], SIGNAL_ID);
    assert.ok(fanoutSpan.attributes["fanout.dispatched"] === "1" || fanoutSpan.attributes["fanout.dispatched"] === 1);
    assert.ok(isAncestor(receiver.spans, signalSpan, fanoutSpan), "the operator call is an ancestor of the fan-out");
    const reconcile = receiver.spans.find((span) => span.name === "job reconcile");
    assert.equal(reconcile?.attributes["job.outcome"], "ok", "the reconcile run is a span with its outcome");
    const allocation = receiver.spans.find((span) => span.name === "engine.allocate");
    assert.ok(
      allocation && isAncestor(receiver.spans, signalSpan, allocation),
      "the allocation is in the signal's trace",
    );
    assert.equal(allocation.attributes["signal.id"], SIGNAL_ID);
    const endpoints = orders().map((order) => order.attributes["venue.endpoint"]);
    assert.ok(endpoints.includes("POST /fapi/v1/order"), `the entry was sent: ${endpoints}`);
    assert.ok(
      endpoints.filter((e) => e === "POST /fapi/v1/algoOrder").length >= 1,
      `protection was sent: ${endpoints}`,
    );
    for (const order of orders()) {
      assert.equal(order.attributes["venue"], "VENUE_A");
      assert.ok(Number(order.attributes["venue.weight"]) >= 0, "the call's weight");
      assert.equal(order.attributes["venue.outcome"], "ok");
    }

    await receiver.waitFor(
      "the request duration by route, the venue outcomes and budget, the fan-out and job durations",
      () =>
        receiver.points.some((point) =>
          point.metric === "http.server.route.duration" && point.unit === "s" &&
          point.attributes["http.route"] === "/operator/v1/signals"
        ) &&
        receiver.points.some((point) =>
          point.metric === "venue.request.count" && point.attributes["venue"] === "VENUE_A" &&
          point.attributes["outcome"] === "ok"
        ) &&
        receiver.points.some((point) =>
          point.metric === "venue.budget.used" && point.attributes["venue"] === "VENUE_A"
        ) &&
        receiver.points.some((point) => point.metric === "engine.fanout.duration" && point.unit === "s") &&
        receiver.points.some((point) =>
          point.metric === "job.run.duration" && point.attributes["job"] === "reconcile" &&
          point.attributes["outcome"] === "ok"
        ),
    );
    await receiver.waitFor(
      "a log line carrying its trace id",
      () =>
        receiver.logs.some((log) =>
          log.traceId === fanoutSpan.traceId && log.body.includes(`"traceId":"${fanoutSpan.traceId}"`) &&
          log.body.includes(`"signalId":"${SIGNAL_ID}"`)
        ),
    );
  } finally {
    const { status } = await service.stop("SIGTERM");
    await receiver.close();
    await Deno.remove(home, { recursive: true });
    assert.equal(status.code, 0);
  }
  service.secrets.assertNotIn(receiver.bodies, "What the OTLP receiver got");
});

/** The operator's and a partner's calls, with the watched service remembering every secret that goes through. */
class Calls {
  auth = "";

  constructor(readonly service: WatchedService, readonly operatorToken: string) {}

  operator(method: string, path: string, body?: unknown) {
    return this.#json(method, path, { authorization: `Bearer ${this.operatorToken}` }, body);
  }

  partner(method: string, path: string, body?: unknown, idempotencyKey?: string) {
    const headers: Record<string, string> = { authorization: `Basic ${btoa(this.auth)}` };
    if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
    return this.#json(method, path, headers, body);
  }

  page(path: string, body: unknown, ticket?: string) {
    return this.#json("POST", path, ticket ? { authorization: `Bearer ${ticket}` } : {}, body);
  }

  // deno-lint-ignore no-explicit-any
  async #json(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
    const response = await this.service.fetch(path, {
      method,
      headers: { ...JSON_TYPE, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  }
}

/** The walkthrough's steps 1 to 12, through HTTP. */
async function tradeOneSignal(calls: Calls): Promise<void> {
  // The README's first call.
  const created = await calls.operator("POST", "/operator/v1/partners", {
    partnerId: "otel",
    name: "Otel Corretora",
    grants: {
      providers: ["VENUE_A"],
      strategies: ["demo-trend"],
      capabilities: ["PERP_TRADING", "LEVERAGE", "STOP_LOSS", "TAKE_PROFIT"],
    },
    riskEnvelope: { maxLeverage: 10, maxMarginPerTradeUsd: 500, maxConcurrentTrades: 3, maxDailyLossUsd: 200 },
    contract: {
      subscriptionMonthlyUsd: 49.9,
      currency: "USDT",
      performanceFeePercent: 0.2,
      performancePeriod: "MONTHLY",
      carryPolicy: "CARRY",
      dueDays: 5,
      subscriptionProviders: ["VENUE_A"],
    },
    builder: { feeTenthsBps: 25 },
    returnUrlOrigins: ["https://app.otel.example"],
    limits: { requestsPerMinute: 600, ordersPerMinute: 60 },
  });
  calls.auth = `${created.credential.clientId}:${created.credential.clientSecret}`;
  await calls.partner("POST", "/v1/users", { externalUserId: USER }, "create-user-otel");
  await calls.operator("PUT", "/operator/v1/providers/VENUE_A", { realExecution: true });

  const session = await calls.partner("POST", `/v1/users/${USER}/connect-sessions`, {
    providerId: "VENUE_A",
    returnUrl: "https://app.otel.example/conta",
  });
  const token = String(session.connectUrl).split("#t=")[1];
  calls.service.secrets.add("connect token", token);
  const { ticket } = await calls.page("/connect/api/session", { token });
  const keys = await calls.page("/connect/api/qa/test-credentials", {}, ticket);
  await calls.page("/connect/api/api-key", keys, ticket);

  const setup = {
    providerId: "VENUE_A",
    mode: "REAL",
    enabled: true,
    leverage: 5,
    orderSizeUsd: 200,
    maxConcurrentTrades: 1,
    maxMarginPerTradeUsd: 50,
    maxDailyLossUsd: 100,
    capitalBase: 1000,
    maxLossPerTrade: 20,
    entryTimeoutMinutes: 30,
    allowMemecoins: false,
  };
  const preview = await calls.partner("POST", `/v1/users/${USER}/setup/preview`, setup);
  const acknowledgement = preview.safety?.required
    ? { riskAcknowledgement: { fingerprint: preview.safety.fingerprint, codes: preview.safety.flags } }
    : {};
  await calls.partner("PUT", `/v1/users/${USER}/setup`, { ...setup, ...acknowledgement }, "setup-otel-1");
  await calls.partner("PUT", `/v1/users/${USER}/automation`, {
    providerId: "VENUE_A",
    strategyId: "demo-trend",
    enabled: true,
    risk: { leverage: 5, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 100 },
  }, "automation-otel-1");
  await calls.operator("POST", "/operator/v1/jobs/reconcile/run");

  const signal = await calls.operator("POST", "/operator/v1/signals", {
    signalId: SIGNAL_ID,
    strategyId: "demo-trend",
    providerId: "VENUE_A",
    symbol: "BTCUSDT",
    side: "BUY",
    entryPrice: 65010,
    stopLossPrice: 63010,
    takeProfits: [{ price: 67010, share: 0.5 }, { price: 69010, share: 0.5 }],
    confidence: 80,
  });
  assert.equal(signal.dispatched, 1, JSON.stringify(signal));
}

/** VENUE_A's order placements: the entry on /order, the stop and the targets on /algoOrder (venues/venue_a/constants.ts). */
const ORDER_ENDPOINTS = /^POST \/fapi\/v1\/(order|algoOrder)$/;

/** The venue calls under the fan-out that send an order (not the leverage, margin type or reads around them). */
function orderSpans(spans: ReceivedSpan[], fanout: ReceivedSpan | undefined): ReceivedSpan[] {
  if (!fanout) return [];
  return spans.filter((span) =>
    ORDER_ENDPOINTS.test(String(span.attributes["venue.endpoint"])) && isAncestor(spans, fanout, span)
  );
}

/** Whether `ancestor` is `span`'s parent, grandparent, ... or is linked from one of them. */
function isAncestor(spans: ReceivedSpan[], ancestor: ReceivedSpan, span: ReceivedSpan): boolean {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  for (let current: ReceivedSpan | undefined = span; current; current = byId.get(current.parentSpanId)) {
    if (current.parentSpanId === ancestor.spanId) return true;
    if (current.links.some((link) => link.spanId === ancestor.spanId)) return true;
  }
  return false;
}
