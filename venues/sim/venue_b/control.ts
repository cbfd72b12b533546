/**
 * `/_control/*` routes of the VENUE_B simulator: the contract tests and the
 * walkthrough (docs/) drive it with (fund wallets, move markets, inject faults, read the
 * payment ledger, pay funding, revoke agents, read the nonce checks).
 */
import type { Context, Hono } from "hono";
import { add, cmp, isDecimal } from "../../decimal.ts";
import type { HexAddress } from "../../types.ts";
import { applyFunding, matchOnMark } from "./matching.ts";
import type { WireUserAbstraction } from "../../venue_b/wire.ts";
import { tenthsBpsToPercent } from "../../venue_b/signing.ts";
import { approveAgent, approveBuilderFee } from "./user_actions.ts";
import { ensureUser, type FaultMode, marketByCoin, nextHash, type SimState, spreadAround, wire } from "./state.ts";

const FAULT_MODES: FaultMode[] = ["NONE", "DOWN", "SLOW", "LOSE_RESPONSE", "REJECT_KEYS"];
/** Delay of SLOW when the caller names none: longer than a typical client timeout in tests. */
const DEFAULT_SLOW_MS = 2_000;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** The most wallets one bulk call sets up: a benchmark's thousands in a few calls, never an unbounded body. */
export const BULK_WALLETS_MAX = 10_000;

function badRequest(c: Context, message: string) {
  return c.json({ error: message }, 400);
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  const body = await c.req.json().catch(() => null);
  return typeof body === "object" && body !== null ? body as Record<string, unknown> : {};
}

function positiveDecimal(value: unknown): value is string {
  return typeof value === "string" && isDecimal(value) && cmp(value, "0") > 0;
}

/** The venue names markets by coin; the control routes also take our symbol ("BTCUSDC"). */
function controlMarket(state: SimState, name: string) {
  return marketByCoin(state, name) ?? marketByCoin(state, name.replace(/USDC$/, ""));
}

const ABSTRACTIONS: WireUserAbstraction[] = [
  "default",
  "disabled",
  "unifiedAccount",
  "portfolioMargin",
  "dexAbstraction",
];

/** Credits `usdc` to a wallet (created when new) as a deposit in its ledger. */
export function fundWallet(state: SimState, address: string, usdc: string) {
  const user = ensureUser(state, address);
  user.usdc = add(user.usdc, usdc);
  user.ledger.push({ time: state.now(), hash: nextHash(state), delta: { type: "deposit", usdc: wire(usdc) } });
  return user;
}

/** Adds the /_control routes to the simulator app. */
export function registerControlRoutes(app: Hono, state: SimState): void {
  app.post("/_control/wallets", async (c) => {
    const { address, usdc } = await jsonBody(c);
    if (typeof address !== "string" || !ADDRESS.test(address)) {
      return badRequest(c, "address must be a 0x-prefixed 20-byte hex address");
    }
    if (typeof usdc !== "string" || !isDecimal(usdc) || cmp(usdc, "0") < 0) {
      return badRequest(c, "usdc must be a non-negative decimal string");
    }
    const user = fundWallet(state, address, usdc);
    return c.json({ address: user.address, usdc: wire(user.usdc) });
  });

  /**
   * Wallets funded and, when named, with their agent approved (unnamed, 90 days) and a builder fee approved,
   * as if each wallet had signed approveAgent and approveBuilderFee: what a benchmark of thousands of
   * connected wallets needs without recovering thousands of signatures. Applied in order; the first
   * refusal stops the call (400, the wallets before it kept).
   */
  app.post("/_control/wallets/bulk", async (c) => {
    const { usdc, wallets, builder } = await jsonBody(c);
    if (typeof usdc !== "string" || !isDecimal(usdc) || cmp(usdc, "0") < 0) {
      return badRequest(c, "usdc must be a non-negative decimal string");
    }
    if (!Array.isArray(wallets) || wallets.length < 1 || wallets.length > BULK_WALLETS_MAX) {
      return badRequest(c, `wallets must be a list of 1 to ${BULK_WALLETS_MAX} wallets`);
    }
    const builderFee = builder as { address?: unknown; maxFeeTenthsBps?: unknown } | undefined;
    if (
      builderFee !== undefined &&
      (typeof builderFee !== "object" || builderFee === null || typeof builderFee.address !== "string" ||
        !ADDRESS.test(builderFee.address) || !Number.isInteger(builderFee.maxFeeTenthsBps) ||
        (builderFee.maxFeeTenthsBps as number) < 1)
    ) {
      return badRequest(c, "builder must be {address, maxFeeTenthsBps} with a whole fee of at least 1");
    }
    for (const [index, wallet] of wallets.entries()) {
      const { address, agentAddress } = (wallet ?? {}) as { address?: unknown; agentAddress?: unknown };
      if (typeof address !== "string" || !ADDRESS.test(address)) {
        return badRequest(c, `wallets[${index}].address must be a 0x-prefixed 20-byte hex address`);
      }
      if (agentAddress !== undefined && (typeof agentAddress !== "string" || !ADDRESS.test(agentAddress))) {
        return badRequest(c, `wallets[${index}].agentAddress must be a 0x-prefixed 20-byte hex address`);
      }
    }
    for (const [index, wallet] of (wallets as { address: string; agentAddress?: HexAddress }[]).entries()) {
      const user = fundWallet(state, wallet.address, usdc);
      const refusal =
        (wallet.agentAddress && approveAgent(state, user, { agentAddress: wallet.agentAddress, agentName: "" })) ||
        (builderFee && approveBuilderFee(state, user, {
          builder: builderFee.address as HexAddress,
          maxFeeRate: tenthsBpsToPercent(builderFee.maxFeeTenthsBps as number),
        }));
      if (refusal) return badRequest(c, `wallets[${index}]: ${refusal}`);
    }
    return c.json({ wallets: wallets.length });
  });

  app.put("/_control/markets/:coin", async (c) => {
    const found = controlMarket(state, c.req.param("coin"));
    if (!found) return c.json({ error: `Unknown coin "${c.req.param("coin")}"` }, 404);
    const { markPrice, bid, ask, depth } = await jsonBody(c);
    if (!positiveDecimal(markPrice)) return badRequest(c, "markPrice must be a positive decimal string");
    for (const [name, value] of Object.entries({ bid, ask })) {
      if (value !== undefined && !positiveDecimal(value)) {
        return badRequest(c, `${name} must be a positive decimal string`);
      }
    }
    if (depth !== undefined && (typeof depth !== "string" || !isDecimal(depth))) {
      return badRequest(c, "depth must be a decimal string");
    }
    const { market, index } = found;
    const spread = spreadAround(markPrice, market.szDecimals);
    market.markPx = markPrice;
    market.bid = (bid as string | undefined) ?? spread.bid;
    market.ask = (ask as string | undefined) ?? spread.ask;
    if (depth !== undefined) market.depth = depth as string;
    // Moving the mark is what fills resting limits and fires triggers.
    matchOnMark(state, index);
    return c.json({
      coin: market.coin,
      markPrice: wire(market.markPx),
      bid: wire(market.bid),
      ask: wire(market.ask),
      depth: wire(market.depth),
    });
  });

  // The venue's own way is the user-signed userSetAbstraction; tests set the mode directly.
  app.put("/_control/wallets/:address/abstraction", async (c) => {
    const address = c.req.param("address");
    if (!ADDRESS.test(address)) return badRequest(c, "address must be a 0x-prefixed 20-byte hex address");
    const { abstraction } = await jsonBody(c);
    if (!ABSTRACTIONS.includes(abstraction as WireUserAbstraction)) {
      return badRequest(c, `abstraction must be one of ${ABSTRACTIONS.join(", ")}`);
    }
    const user = ensureUser(state, address);
    user.abstraction = abstraction as WireUserAbstraction;
    return c.json({ address: user.address, abstraction: user.abstraction });
  });

  app.put("/_control/faults", async (c) => {
    const { mode, ms } = await jsonBody(c);
    if (!FAULT_MODES.includes(mode as FaultMode)) return badRequest(c, `mode must be one of ${FAULT_MODES.join(", ")}`);
    if (ms !== undefined && (typeof ms !== "number" || !Number.isInteger(ms) || ms < 0)) {
      return badRequest(c, "ms must be a whole number of milliseconds");
    }
    state.faults = {
      mode: mode as FaultMode,
      ms: (ms as number | undefined) ?? (mode === "SLOW" ? DEFAULT_SLOW_MS : 0),
    };
    return c.json(state.faults);
  });

  /**
   * Holds fired market triggers at `triggered` (the venue's "Order triggered and awaiting
   * execution"), so a test can read the order between firing and fill; releasing executes them.
   */
  app.put("/_control/trigger-hold", async (c) => {
    const { hold } = await jsonBody(c);
    if (typeof hold !== "boolean") return badRequest(c, "hold must be true or false");
    state.triggerHold = hold;
    if (!hold) state.markets.forEach((_, index) => matchOnMark(state, index));
    const held = [...state.orders.values()].filter((order) => order.status === "triggered").length;
    return c.json({ hold, held });
  });

  // The duplicate-cloid refusal's wording is unknown (state.ts): tests change it to prove nothing reads it.
  app.put("/_control/refusals", async (c) => {
    const { duplicateCloid } = await jsonBody(c);
    if (typeof duplicateCloid !== "string" || !duplicateCloid) return badRequest(c, "duplicateCloid must be a text");
    state.duplicateCloidText = duplicateCloid;
    return c.json({ duplicateCloid });
  });

  app.get("/_control/ledger", (c) => {
    const user = c.req.query("user");
    if (!user || !ADDRESS.test(user)) return badRequest(c, "user must be a 0x-prefixed 20-byte hex address");
    const address = user.toLowerCase() as HexAddress;
    const sends = state.sends.filter((send) => send.user === address || send.destination === address);
    return c.json({ user: address, sends });
  });

  // Every signed action's nonce is checked (verify.ts): how many passed, how many were refused and why.
  app.get("/_control/nonces", (c) => c.json(state.nonceChecks));

  app.post("/_control/funding", async (c) => {
    const { coin, rate } = await jsonBody(c);
    const found = controlMarket(state, String(coin));
    if (!found) return c.json({ error: `Unknown coin "${String(coin)}"` }, 404);
    if (typeof rate !== "string" || !isDecimal(rate)) {
      return badRequest(c, 'rate must be a decimal string, e.g. "0.0001"');
    }
    return c.json({ coin: found.market.coin, rate, payments: applyFunding(state, found.index, rate) });
  });

  app.delete("/_control/agents/:agentAddress", (c) => {
    const address = c.req.param("agentAddress").toLowerCase() as HexAddress;
    if (!state.agents.delete(address)) return c.json({ error: `No approved agent ${address}` }, 404);
    return c.json({ agentAddress: address, revoked: true });
  });
}
