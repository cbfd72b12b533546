/**
 * The steps of the product the crash harness kills the service in the middle
 * of. Each drives real work through the HTTP API, the jobs and the venue
 * simulator, the way a partner, the market and the scheduler would; none of
 * them asserts anything (a step may be cut anywhere), the invariants do.
 */
import { automationBody, completeSetup } from "../setup/setup_fixture.ts";
import { type ChaosWorld, PAYER_WALLET, RECIPIENT, type Scenario } from "./chaos_world.ts";

export interface Step {
  name: string;
  run(world: ChaosWorld): Promise<void>;
}

const SYMBOL = "BTCUSDT";
const DAY_MS = 24 * 3600 * 1000;

async function job(world: ChaosWorld, name: string): Promise<void> {
  const answer = await world.operator("POST", `/operator/v1/jobs/${name}/run`);
  if (answer.status !== 200) throw new Error(`job ${name}: ${answer.status} ${answer.text}`);
}

/**
 * Onboard a user (or finish one a kill interrupted): the client, a hosted
 * connection with its own simulator key, the setup and the automation. Every
 * part is asked again only when missing, as a partner's retry would.
 */
export async function onboard(world: ChaosWorld, scenario: Scenario, user: string): Promise<void> {
  if (!scenario.users.includes(user)) scenario.users.push(user);
  await world.idempotent("POST", "/v1/users", { externalUserId: user }, "user");
  const providers = await world.partner("GET", `/v1/users/${user}/providers`);
  const venueA = providers.body?.providers?.find((view: { providerId: string }) => view.providerId === "VENUE_A");
  if (venueA?.connection !== "CONNECTED") {
    const keys = world.venueKeys.get(user) ?? await world.newVenueAccount(user);
    const session = await world.partner("POST", `/v1/users/${user}/connect-sessions`, { providerId: "VENUE_A" });
    const token = session.body.connectUrl.split("#t=")[1];
    const page = await world.page("/connect/api/session", { token });
    await world.page("/connect/api/api-key", keys, page.body.ticket);
  }
  await world.idempotent("PUT", `/v1/users/${user}/setup`, completeSetup({ autoBreakEven: true }), "setup");
  await world.idempotent("PUT", `/v1/users/${user}/automation`, automationBody(), "automation");
  // Entries wait for the account's first reconciliation.
  await job(world, "reconcile");
}

/** The market moves; the stops, targets and break-even follow through the monitor and reconciliation. */
async function moveMarket(world: ChaosWorld, scenario: Scenario): Promise<void> {
  const drift = scenario.markPrice / 65_000 - 1;
  const moves = [0.012, 0.025, -0.025, 0.003, -0.003];
  const move = Math.abs(drift) > 0.05 ? -Math.sign(drift) * 0.03 : moves[world.random.below(moves.length)];
  scenario.markPrice = Math.round(scenario.markPrice * (1 + move));
  await world.simulator("PUT", `/markets/${SYMBOL}`, { markPrice: String(scenario.markPrice) });
  await job(world, "protection-monitor");
  await job(world, "reconcile");
}

/** The signal source posts until it gets an answer; the same signalId again resumes, never doubles, the fan-out. */
async function postSignal(world: ChaosWorld): Promise<void> {
  const signal = world.scenario.unansweredSignal;
  if (!signal) return;
  const answer = await world.operator("POST", "/operator/v1/signals", signal);
  if (answer.status === 200) world.scenario.unansweredSignal = undefined;
}

async function openPositionsOf(world: ChaosWorld, user: string) {
  const answer = await world.partner("GET", `/v1/users/${user}/positions?providerId=VENUE_A`);
  return (answer.body?.positions ?? []) as { symbol: string; quantity: number }[];
}

export const STEPS: Step[] = [
  {
    name: "signal fan-out and entries",
    async run(world) {
      const scenario = world.scenario;
      // Longs and shorts in turn. A marketable limit just past the mark, as a signal engine prices an entry
      // it wants filled; the stop and targets on either side of it.
      const long = scenario.signals % 2 === 0;
      const price = Math.round(scenario.markPrice * (long ? 1.0005 : 0.9995));
      const away = (share: number) => Math.round(price * (long ? 1 + share : 1 - share));
      scenario.unansweredSignal = {
        signalId: `chaos-signal-${++scenario.signals}-${world.random.below(1e9)}`,
        strategyId: "trend-follow",
        providerId: "VENUE_A",
        symbol: SYMBOL,
        side: long ? "BUY" : "SELL",
        entryPrice: price,
        stopLossPrice: away(-0.02),
        takeProfits: [{ price: away(0.01), share: 0.5 }, { price: away(0.02), share: 0.5 }],
        confidence: 80,
      };
      await postSignal(world);
    },
  },
  { name: "protection placement and break-even", run: (world) => moveMarket(world, world.scenario) },
  {
    name: "closing",
    async run(world) {
      // A partner closes the open positions of a third of the users, side by side.
      const { users } = world.scenario;
      await Promise.all(
        users.filter(() => world.random.next() < 0.34).map(async (user) => {
          const [position] = await openPositionsOf(world, user);
          if (!position) return;
          await world.idempotent("POST", "/v1/orders/execute", {
            externalUserId: user,
            type: "CLOSE_POSITION",
            providerId: "VENUE_A",
            symbol: position.symbol,
            intentId: world.nextKey("close").slice(0, 60),
          }, "close");
        }),
      );
    },
  },
  { name: "reconciliation", run: (world) => job(world, "reconcile") },
  {
    name: "period close and adjustments",
    async run(world) {
      const scenario = world.scenario;
      // Funding paid now lands in a week already closed once the clock has moved on: a late fact, an adjustment.
      await world.simulator("POST", "/funding", { symbol: SYMBOL, rate: "0.0001" });
      await job(world, "reconcile");
      scenario.clock += 7 * DAY_MS;
      await world.operator("PUT", "/operator/v1/clock", { now: new Date(scenario.clock).toISOString() });
      await job(world, "period-close");
      await job(world, "billing-cycle");
    },
  },
  {
    name: "payment confirmation",
    async run(world) {
      const scenario = world.scenario;
      for (const user of scenario.users) {
        const owed = await world.partner("GET", `/v1/users/${user}/obligations`);
        const open = (owed.body?.obligations ?? []).find((o: { status: string }) => o.status === "OPEN");
        if (!open) continue;
        const instruction = await world.idempotent(
          "POST",
          `/v1/users/${user}/obligations/${open.obligationId}/payment-instructions`,
          { networkId: "arbitrum", token: "USDT", payerAddress: world.chain.wallet(PAYER_WALLET).address },
          "instruction",
        );
        const payment = instruction.body?.payment;
        if (instruction.status !== 200 || !payment) continue;
        const txHash = await world.chain.transfer(world.token, PAYER_WALLET, RECIPIENT, BigInt(payment.tokenAmount));
        scenario.transfers.set(payment.paymentId, { user, txHash });
        await world.idempotent(
          "POST",
          `/v1/users/${user}/payments/${payment.paymentId}/confirm`,
          { txHash },
          "confirm",
        );
        return;
      }
    },
  },
  { name: "webhook delivery and retries", run: (world) => job(world, "webhook-delivery") },
  {
    name: "connection completion",
    async run(world) {
      await onboard(world, world.scenario, `user-${world.scenario.users.length + 1}`);
    },
  },
];

/**
 * After a restart: what a partner and the scheduler would do next. Finish an
 * onboarding the kill cut, confirm again a payment whose transfer is on chain
 * but not credited, and let reconciliation and the monitor look at everything.
 */
export async function recover(world: ChaosWorld): Promise<void> {
  const scenario = world.scenario;
  await world.retryInterrupted();
  await postSignal(world);
  const last = scenario.users.at(-1);
  if (last) await onboard(world, scenario, last);
  for (const [paymentId, { user, txHash }] of scenario.transfers) {
    const read = await world.partner("GET", `/v1/users/${user}/payments/${paymentId}`);
    if (read.body?.payment?.status === "CONFIRMED") continue;
    await world.idempotent("POST", `/v1/users/${user}/payments/${paymentId}/confirm`, { txHash }, "confirm");
  }
  for (const name of ["reconcile", "protection-monitor", "reconcile", "webhook-delivery"]) await job(world, name);
  // An order the dead process sent is only queried once its deadline (VENUE_A: 5 s after it was recorded, and a
  // second of margin) has passed, and an account whose entry lease the dead process held is only reconciled once
  // that lease has run out: until then its fate, and its position's protection, are honestly unknown. Wait both
  // out, then look again.
  const waitMs = await unsettledFor(world);
  if (waitMs !== null) {
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    for (const name of ["reconcile", "protection-monitor", "reconcile"]) await job(world, name);
  }
}

/** The jobs again, once what kept the reconciliation from an account (a lease of the killed process) ran out. */
export async function recoverAgain(world: ChaosWorld): Promise<void> {
  for (const name of ["reconcile", "protection-monitor", "reconcile"]) await job(world, name);
}

/** VENUE_A's receive window (5 s) and a second of margin, as the service counts it, and some slack. */
const ACTION_WINDOW_MS = 6_500;

/**
 * How long to wait before everything can be settled, or null when nothing is
 * pending: the action window when an order's fate or a position's protection
 * is unknown, or longer, until the last entry lease left held runs out.
 */
async function unsettledFor(world: ChaosWorld): Promise<number | null> {
  const db = await world.openDatabase();
  try {
    const [[pending, heldUntil]] = await db.read.values(
      `SELECT (SELECT count(*) FROM intents WHERE status IN ('SUBMITTING', 'UNCERTAIN'))
          + (SELECT count(*) FROM positions WHERE status = 'OPEN' AND protection_status <> 'PROTECTED')
          + (SELECT count(*) FROM entry_leases WHERE owner IS NOT NULL),
        (SELECT max(leased_until) FROM entry_leases WHERE owner IS NOT NULL)`,
    ) as [[number, number | null]];
    if (pending === 0) return null;
    return Math.max(ACTION_WINDOW_MS, (heldUntil ?? 0) - Date.now() + 500);
  } finally {
    db.close();
  }
}
