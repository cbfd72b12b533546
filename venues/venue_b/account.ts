/**
 * VENUE_B account reads (always with the principal's address: the agent's own
 * address has no state), the credential check, and the user-signed relay.
 */
import { max, sub } from "../decimal.ts";
import type {
  AccountSnapshot,
  Balance,
  CredentialCheck,
  Fill,
  FundingPayment,
  HexAddress,
  LedgerEntry,
  Order,
  PositionSize,
  UserSignedAction,
  VenueCredentials,
} from "../types.ts";
import { FILLS_PAGE_LIMIT, FUNDING_PAGE_LIMIT, LEDGER_PAGE_LIMIT, QUOTE_ASSET } from "./constants.ts";
import { agentCredentials, openAgentKey, principal, type VenueBContext } from "./context.ts";
import { userSignedActionError, venueError } from "./errors.ts";
import {
  accountHint,
  toFill,
  toFunding,
  toLedgerEntry,
  toOrder,
  toPosition,
  toSymbol,
  wireDecimal,
} from "./mappers.ts";
import { addressFromPrivateKey } from "./signing.ts";
import type {
  WireClearinghouseState,
  WireExtraAgent,
  WireFill,
  WireFrontendOrder,
  WireFunding,
  WireLedgerUpdate,
  WireSpotClearinghouseState,
  WireUserAbstraction,
  WireUserRole,
} from "./wire.ts";

/**
 * Reads a time-ranged info request page by page. Bounds are inclusive, so the
 * next page starts at the last time seen and repeats are dropped by key; a
 * page that brings nothing new ends the walk even if the cap was guessed wrong.
 */
async function collectSince<T>(
  fetchPage: (startTime: number) => Promise<T[]>,
  since: number,
  pageLimit: number,
  keyOf: (item: T) => string,
  timeOf: (item: T) => number,
): Promise<T[]> {
  const seen = new Map<string, T>();
  let start = since;
  while (true) {
    const page = await fetchPage(start);
    const fresh = page.filter((item) => !seen.has(keyOf(item)));
    for (const item of fresh) seen.set(keyOf(item), item);
    if (fresh.length === 0 || page.length < pageLimit) break;
    start = Math.max(...page.map(timeOf));
  }
  return [...seen.values()].sort((a, b) => timeOf(a) - timeOf(b));
}

/**
 * Read-only check: the sealed key opens to the agent address and the agent is
 * approved for the principal, until when. The principal's named agents
 * (`extraAgents`, weight 20) give both. An agent it does not list is asked
 * about once more by its own `userRole` (weight 60), which names its master
 * while the approval is live: whether the venue lists an unnamed agent is not
 * documented, and an agent approved with no name is approved all the same,
 * until a date the venue does not tell.
 */
export async function testCredentials(ctx: VenueBContext, credentials: VenueCredentials): Promise<CredentialCheck> {
  const agent = agentCredentials(credentials);
  const key = await openAgentKey(ctx, agent);
  if (addressFromPrivateKey(key) !== agent.agentAddress.toLowerCase()) {
    throw venueError("CREDENTIAL_REJECTED", "The stored agent key does not belong to the agent address");
  }
  const listed = await listedAgent(ctx, principal(agent), agent.agentAddress);
  const approved = listed !== null || await actsFor(ctx, agent.agentAddress, principal(agent));
  return {
    permissions: { canRead: true, canFutures: approved, canWithdraw: false },
    accountHint: accountHint(principal(agent)),
    problems: approved ? [] : ["AGENT_NOT_APPROVED"],
    accessExpiresAt: listed?.validUntil ?? null,
  };
}

/** Whether the venue takes `agent`'s signature as `user`'s (its userRole names the master while approved). */
async function actsFor(ctx: VenueBContext, agent: HexAddress, user: string): Promise<boolean> {
  const role = await ctx.client.info<WireUserRole>({ type: "userRole", user: agent.toLowerCase() });
  return role.role === "agent" && role.data.user.toLowerCase() === user;
}

function openOrders(ctx: VenueBContext, user: string) {
  return ctx.client.info<WireFrontendOrder[]>({ type: "frontendOpenOrders", user });
}

/**
 * Balances, positions and regular (non-trigger) open orders of the principal.
 * Where the balances are depends on the account's abstraction mode: a
 * unified-account or portfolio-margin user's collateral is in the spot
 * clearinghouse state (free = total - hold), anyone else's USDC in the perp
 * state. Positions are always in the perp state.
 */
export async function getAccount(ctx: VenueBContext, credentials: VenueCredentials): Promise<AccountSnapshot> {
  const user = principal(agentCredentials(credentials));
  const [state, orders, abstraction] = await Promise.all([
    ctx.client.info<WireClearinghouseState>({ type: "clearinghouseState", user }),
    openOrders(ctx, user),
    accountMode(ctx, user),
  ]);
  return {
    balances: keepsCollateralInSpot(abstraction) ? await spotBalances(ctx, user) : perpBalance(state),
    positions: state.assetPositions.map((entry) => toPosition(entry.position)),
    openOrders: orders.filter((order) => !order.isTrigger).map((order) => toOrder(order, "open", null)),
  };
}

/** Position sizes from the perp state alone (weight 2): the cheapest read that shows them. */
export async function getPositionSizes(ctx: VenueBContext, credentials: VenueCredentials): Promise<PositionSize[]> {
  const user = principal(agentCredentials(credentials));
  const state = await ctx.client.info<WireClearinghouseState>({ type: "clearinghouseState", user });
  return state.assetPositions.map((entry) => toPosition(entry.position))
    .map(({ symbol, side, quantity }) => ({ symbol, side, quantity }));
}

/** The account's abstraction mode (`userAbstraction`): where its balances are kept and how they may leave. */
export function accountMode(ctx: VenueBContext, user: string): Promise<WireUserAbstraction> {
  return ctx.client.info<WireUserAbstraction>({ type: "userAbstraction", user: user.toLowerCase() });
}

/** Unified-account and portfolio-margin accounts keep every balance and hold in spot. */
export function keepsCollateralInSpot(mode: WireUserAbstraction): boolean {
  return mode === "unifiedAccount" || mode === "portfolioMargin";
}

function perpBalance(state: WireClearinghouseState): Balance[] {
  const accountValue = wireDecimal(state.marginSummary.accountValue);
  return [{ asset: QUOTE_ASSET, free: wireDecimal(state.withdrawable), total: accountValue, usdValue: accountValue }];
}

async function spotBalances(ctx: VenueBContext, user: string): Promise<Balance[]> {
  const spot = await ctx.client.info<WireSpotClearinghouseState>({ type: "spotClearinghouseState", user });
  return spot.balances.map((row) => {
    const total = wireDecimal(row.total);
    return {
      asset: row.coin,
      free: max("0", sub(total, wireDecimal(row.hold))),
      total,
      // USDC is the quote; other tokens' USD value would need a spot price the account read does not have.
      usdValue: row.coin === QUOTE_ASSET ? total : null,
    };
  });
}

/** Open trigger (TP/SL) orders, optionally of one market. */
export async function listProtections(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  symbol?: string,
): Promise<Order[]> {
  const orders = await openOrders(ctx, principal(agentCredentials(credentials)));
  return orders
    .filter((order) => order.isTrigger && (!symbol || symbol === order.coin || symbol === toSymbol(order.coin)))
    .map((order) => toOrder(order, "open", null));
}

/** Fills since `since` (inclusive), oldest first, with fees and builder fees as the venue reports them. */
export async function getFills(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  query: { symbol?: string; since: number },
): Promise<Fill[]> {
  const user = principal(agentCredentials(credentials));
  const fills = await collectSince(
    (startTime) => ctx.client.info<WireFill[]>({ type: "userFillsByTime", user, startTime }),
    query.since,
    FILLS_PAGE_LIMIT,
    (fill) => String(fill.tid),
    (fill) => fill.time,
  );
  const symbol = query.symbol;
  return fills.filter((fill) => !symbol || symbol === fill.coin || symbol === toSymbol(fill.coin)).map(toFill);
}

/** Funding payments since `since`, signed as the venue reports them (positive = received). */
export async function getFunding(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  query: { since: number },
): Promise<FundingPayment[]> {
  const user = principal(agentCredentials(credentials));
  const entries = await collectSince(
    (startTime) => ctx.client.info<WireFunding[]>({ type: "userFunding", user, startTime }),
    query.since,
    FUNDING_PAGE_LIMIT,
    (entry) => `${entry.hash}:${entry.delta.coin}:${entry.time}`,
    (entry) => entry.time,
  );
  return entries.map(toFunding);
}

/** The fee cap `user` approved for `builder`, in tenths of a basis point (0 when none). */
export async function getMaxBuilderFee(ctx: VenueBContext, user: HexAddress, builder: HexAddress): Promise<number> {
  const fee = await ctx.client.info<number>({
    type: "maxBuilderFee",
    user: user.toLowerCase(),
    builder: builder.toLowerCase(),
  });
  return typeof fee === "number" ? fee : 0;
}

/** Relays an action the user signed in their own wallet; the venue verifies it. NONCE_SPENT: see userSignedActionError. */
export async function submitUserSignedAction(ctx: VenueBContext, signed: UserSignedAction): Promise<void> {
  try {
    await ctx.client.exchange({ action: signed.action, nonce: signed.nonce, signature: signed.signature });
  } catch (error) {
    throw userSignedActionError(error);
  }
}

/**
 * Whether `agent` is approved, unexpired, for `user`: the user's named agents
 * (`extraAgents`, weight 20; the agent's own `userRole` costs 60). The venue
 * may not list an unnamed agent; the service always names its own.
 */
export async function isAgentApproved(ctx: VenueBContext, user: HexAddress, agent: HexAddress): Promise<boolean> {
  return await listedAgent(ctx, user, agent) !== null;
}

/** `agent` among `user`'s named agents, unexpired (weight 20); null when it is not. */
async function listedAgent(ctx: VenueBContext, user: string, agent: HexAddress): Promise<WireExtraAgent | null> {
  const agents = await ctx.client.info<WireExtraAgent[]>({ type: "extraAgents", user: user.toLowerCase() });
  const address = agent.toLowerCase();
  return agents.find((entry) =>
    entry.address.toLowerCase() === address && (entry.validUntil === null || entry.validUntil > ctx.now())
  ) ?? null;
}

/** The user's non-funding ledger updates since `since`, oldest first. */
export async function getLedger(ctx: VenueBContext, user: HexAddress, since: number): Promise<LedgerEntry[]> {
  const address = user.toLowerCase() as HexAddress;
  const updates = await collectSince(
    (startTime) =>
      ctx.client.info<WireLedgerUpdate[]>({ type: "userNonFundingLedgerUpdates", user: address, startTime }),
    since,
    LEDGER_PAGE_LIMIT,
    (update) => `${update.hash}:${update.delta.type}:${update.time}`,
    (update) => update.time,
  );
  return updates.map((update) => toLedgerEntry(update, address));
}
