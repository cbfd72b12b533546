/**
 * The VENUE_B simulator as a Hono app: the venue's `POST /info` and
 * `POST /exchange` with their real shapes, signature checks and error texts,
 * its WebSocket at `GET /ws` (stream.ts), fault injection, and the
 * `/_control` routes. Mount it anywhere (`/sim/venue-b` in QA); every
 * instance has its own in-memory state.
 */
import { type Context, Hono } from "hono";
import { fundWallet, registerControlRoutes } from "./control.ts";
import { answerExchange } from "./exchange.ts";
import { answerInfo } from "./info.ts";
import { createSimState, type SimState } from "./state.ts";
import { WireShapeError } from "./canonical.ts";
import {
  admitIpWeight,
  chargeIpWeight,
  exchangeRequestWeight,
  infoAnswerWeight,
  infoRequestWeight,
  registerLimitRoutes,
  setLimits,
  type SimLimits,
} from "./limits.ts";
import { registerStreamControlRoutes, SimStream, type VenueBStreamOptions } from "./stream.ts";

/** Options of a simulator instance. */
export interface VenueBSimulatorOptions {
  now?: () => number;
  /** Network the simulator signs as (source "a" / hyperliquidChain "Mainnet"); default true. */
  isMainnet?: boolean;
  /** Wallets funded at start (e.g. the platform's builder, which must hold 100 USDC to be approved). */
  wallets?: { address: string; usdc: string }[];
  /** The REST rate limits (limits.ts); default: on, at the venue's published values. */
  limits?: Partial<SimLimits>;
  /** The WebSocket's per-IP limits and idle timeout (default: the venue's). */
  stream?: VenueBStreamOptions;
}

function unavailable(c: Context) {
  return c.text("Service unavailable", 503);
}

/** How an endpoint weighs against the IP's minute: before answering, and what the answer adds. */
interface Weighing {
  before(state: SimState, body: unknown): number;
  after?(body: unknown, reply: unknown): number;
}

const INFO_WEIGHT: Weighing = {
  before: (_state, body) => infoRequestWeight((body as { type?: unknown } | null)?.type),
  after: (body, reply) => infoAnswerWeight((body as { type?: unknown } | null)?.type, reply),
};
const EXCHANGE_WEIGHT: Weighing = { before: exchangeRequestWeight };

/**
 * Runs a venue endpoint: JSON in, JSON out, 400/422 text for bodies the venue
 * could not read, 429 with a JSON `null` body over the IP's weight (limits.ts).
 */
async function serve(
  c: Context,
  state: SimState,
  answer: (state: SimState, body: unknown) => unknown,
  weighing: Weighing,
) {
  if (state.faults.mode === "DOWN") return unavailable(c);
  if (state.faults.mode === "SLOW") await new Promise((resolve) => setTimeout(resolve, state.faults.ms));
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch (error) {
    return c.text(`Failed to parse the request body as JSON: ${(error as Error).message}`, 400);
  }
  if (!admitIpWeight(state, weighing.before(state, body))) return c.json(null, 429);
  let reply: unknown;
  try {
    reply = answer(state, body);
  } catch (error) {
    if (!(error instanceof WireShapeError)) throw error;
    return c.text(`Failed to deserialize the JSON body into the target type: ${error.message}`, 422);
  }
  chargeIpWeight(state, weighing.after?.(body, reply) ?? 0);
  return c.json(reply);
}

/** A fresh simulator with BTC, ETH and SOL listed and no wallets. */
export function createVenueBSimulator(options: VenueBSimulatorOptions = {}): Hono {
  const state = createSimState({ now: options.now ?? (() => Date.now()), isMainnet: options.isMainnet ?? true });
  for (const wallet of options.wallets ?? []) fundWallet(state, wallet.address, wallet.usdc);
  if (options.limits) setLimits(state, options.limits);
  const app = new Hono();
  app.post("/info", (c) => serve(c, state, answerInfo, INFO_WEIGHT));
  app.post("/exchange", async (c) => {
    const response = await serve(c, state, answerExchange, EXCHANGE_WEIGHT);
    // The action was applied and kept; only its answer is lost on the way back.
    return state.faults.mode === "LOSE_RESPONSE" && response.status === 200 ? unavailable(c) : response;
  });
  const stream = new SimStream(state, options.stream);
  app.get("/ws", (c) => stream.upgrade(c));
  registerControlRoutes(app, state);
  registerLimitRoutes(app, state);
  registerStreamControlRoutes(app, stream);
  return app;
}
