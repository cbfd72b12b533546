/**
 * The partner's manual orders (`POST /v1/orders/prepare|execute`). An opening
 * (OPEN_POSITION, or PLACE_ORDER without reduceOnly) passes the entry gates as
 * a manual order, the envelope and the entry-moment admission, and is a LIMIT
 * order; everything else is maintenance (close, reduce, cancel, protect, set
 * leverage or margin mode) and is never gated. Prepare validates and records
 * nothing at the venue; execute records the intent before sending it, and a
 * retry of the same intent answers the intent instead of sending again.
 */
import { wallClockNow } from "../clock.ts";
import { and, asc, eq, inArray } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents, positions, type TakeProfit } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import { type AccountRow, findAccount } from "../accounts/load_account.ts";
import { admitEntry } from "../admission/entry_admission.ts";
import { assetPolicyOf } from "../catalog/asset_policies.ts";
import { type ClientRow, loadClient } from "../clients/load_client.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { evaluateEntry } from "../gates/entry_gates.ts";
import { entryRefusal } from "../gates/entry_refusal.ts";
import { gateSnapshotsOf } from "../gates/gate_snapshot.ts";
import { assertProviderUsable, type EffectiveAccess, effectiveAccessOf } from "../grants/effective_access.ts";
import { sha256Hex } from "../ids.ts";
import { microsToUsd } from "../money.ts";
import { setupOfClient } from "../setups/setups.ts";
import { valuesOf } from "../setups/setup_values.ts";
import { sendEntry } from "../engine/entry_fills.ts";
import { cmp, div, isZero, mul, roundToStep } from "../../venues/decimal.ts";
import type { Market, ProviderId } from "../../venues/types.ts";
import {
  findIntent,
  insertIntent,
  intentById,
  type IntentDraft,
  intentListView,
  type IntentRow,
  resubmitIntent,
  transitionIntent,
} from "./intents.ts";
import { type Leg, placeLeg, type PositionRow, recordProtection, takeProfitQuantities } from "./protection.ts";
import { claimEntryLease, type EntryLease, holdingEntryLease, newLeaseOwner } from "./entry_leases.ts";
import { sendIntent } from "./send_intent.ts";
import { reconcileAccount } from "./reconcile_account.ts";
import { callVenue } from "../venues/call_venue.ts";
import { findMarket } from "../venues/markets.ts";

export type ManualOrderType =
  | "OPEN_POSITION"
  | "PLACE_ORDER"
  | "CLOSE_POSITION"
  | "CANCEL_ORDER"
  | "CANCEL_ALL_ORDERS"
  | "UPDATE_ORDER"
  | "SET_LEVERAGE"
  | "SET_MARGIN_MODE"
  | "SET_STOP_LOSS"
  | "SET_TAKE_PROFIT";

/** The Order body, amounts as exact decimal strings. */
export interface ManualOrder {
  externalUserId: string;
  type: ManualOrderType;
  providerId: ProviderId;
  intentId?: string;
  symbol?: string;
  side?: "BUY" | "SELL";
  orderType?: "LIMIT" | "MARKET" | "STOP_MARKET" | "TAKE_PROFIT_MARKET";
  quantity?: string;
  notionalUsd?: string;
  price?: string;
  triggerPrice?: string;
  timeInForce?: "GTC" | "IOC" | "FOK" | "POST_ONLY";
  leverage?: number;
  marginMode?: "ISOLATED" | "CROSS";
  reduceOnly?: boolean;
  stopLossPrice?: string | null;
  takeProfits?: TakeProfit[];
  portion?: string;
  orderId?: string;
  positionSide?: "BUY" | "SELL";
}

/** Everything an order needs resolved: the client, the access, the account and the market. */
interface Resolved {
  client: ClientRow;
  access: EffectiveAccess;
  account: AccountRow;
  market: Market | null;
  /** An opening's: the account's entry lease, held from its gates to its protection. */
  lease?: EntryLease;
}

const required = <T>(value: T | undefined | null, field: string): T => {
  if (value === undefined || value === null) {
    throw new ApiError("VALIDATION_ERROR", { message: `${field}: obrigatório para este tipo de ordem.` });
  }
  return value;
};

export function isOpening(order: ManualOrder): boolean {
  return order.type === "OPEN_POSITION" || (order.type === "PLACE_ORDER" && !order.reduceOnly);
}

/**
 * What an order of its type must carry, checked before anything is read: a
 * malformed order is 400 VALIDATION_ERROR whatever the client's state (a
 * client without a connection must not hide it behind CREDENTIALS_MISSING).
 */
export function assertOrderShape(order: ManualOrder): void {
  if (order.type !== "CANCEL_ALL_ORDERS") required(order.symbol, "symbol");
  switch (order.type) {
    case "OPEN_POSITION":
    case "PLACE_ORDER": {
      const orderType = required(order.orderType, "orderType");
      required(order.side, "side");
      if (orderType === "LIMIT") required(order.price, "price");
      if (orderType === "STOP_MARKET" || orderType === "TAKE_PROFIT_MARKET") {
        required(order.triggerPrice, "triggerPrice");
      }
      if (isOpening(order) && orderType !== "LIMIT") {
        throw new ApiError("VALIDATION_ERROR", { message: "orderType: uma abertura real só aceita LIMIT." });
      }
      if ((order.quantity === undefined) === (order.notionalUsd === undefined)) {
        throw new ApiError("VALIDATION_ERROR", { message: "Informe quantity ou notionalUsd (apenas um)." });
      }
      // notionalUsd becomes a quantity at the order's price.
      if (order.notionalUsd !== undefined) required(order.price, "price");
      return;
    }
    case "SET_LEVERAGE":
      required(order.leverage, "leverage");
      return;
    case "SET_MARGIN_MODE":
      required(order.marginMode, "marginMode");
      return;
    case "UPDATE_ORDER":
      required(order.quantity, "quantity");
      required(order.price, "price");
      required(order.orderId, "orderId");
      return;
    case "CANCEL_ORDER":
      required(order.orderId, "orderId");
      return;
    case "SET_STOP_LOSS":
      required(order.positionSide, "positionSide");
      required(order.stopLossPrice, "stopLossPrice");
      return;
    case "SET_TAKE_PROFIT":
      required(order.positionSide, "positionSide");
      required(order.takeProfits, "takeProfits");
      return;
  }
}

/**
 * The client (404), the provider (403), the market (400: a symbol the
 * provider does not list is a malformed order, answered before the state of
 * the account), then the account (422).
 */
async function resolve(ctx: Ctx, order: ManualOrder): Promise<Resolved> {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, order.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  assertProviderUsable(access, order.providerId);
  const market = order.symbol ? await findMarket(ctx, order.providerId, order.symbol) : null;
  if (order.symbol && !market) {
    throw new ApiError("VALIDATION_ERROR", { message: `symbol: ${order.symbol} não é um mercado do provedor.` });
  }
  const account = await findAccount(ctx.db.read, client.id, order.providerId);
  // Maintenance goes on with a revoked account whose secret was kept for it.
  if (!account || (account.connection === "REVOKED" && !account.secretRetainedForReconciliation)) {
    throw new ApiError("CREDENTIALS_MISSING");
  }
  if (isOpening(order) && account.connection === "REVOKED") throw new ApiError("CREDENTIALS_MISSING");
  return { client, access, account, market };
}

/**
 * An order that sends one order to the venue (opening, PLACE_ORDER, closing):
 * the intent it becomes, checked as its kind requires.
 */
async function orderDraft(ctx: Ctx, order: ManualOrder, resolved: Resolved, intentId: string): Promise<IntentDraft> {
  const { client, account } = resolved;
  const market = required(resolved.market, "symbol");
  const base = {
    partnerId: client.partnerId,
    intentId,
    clientId: client.id,
    providerId: order.providerId,
    type: order.type,
    symbol: market.symbol,
  };
  if (order.type === "CLOSE_POSITION") {
    const position = await venuePosition(ctx, account, market.symbol);
    const portion = order.portion ?? "1";
    const quantity = cmp(portion, "1") === 0
      ? position.quantity
      : roundToStep(mul(position.quantity, portion), market.stepSize, "DOWN");
    if (isZero(quantity)) throw new ApiError("VALIDATION_ERROR", { message: "portion: menor que um lote do mercado." });
    return {
      ...base,
      opensPosition: false,
      side: position.side === "LONG" ? "SELL" : "BUY",
      orderType: "MARKET",
      quantity,
      reduceOnly: true,
    };
  }
  // assertOrderShape has checked the fields each kind needs.
  const orderType = order.orderType!;
  const side = order.side!;
  const opening = isOpening(order);
  const quantity = quantityOf(order, market);
  const setup = valuesOf(await setupOfClient(ctx.db.read, client.id, order.providerId) ?? null);
  const leverage = order.leverage ?? setup.leverage;
  if (opening) await checkOpening(ctx, order, resolved, { quantity, price: order.price!, leverage, setup });
  return {
    ...base,
    opensPosition: opening,
    side,
    orderType,
    quantity,
    price: order.price ?? null,
    triggerPrice: order.triggerPrice ?? null,
    timeInForce: order.timeInForce ?? (orderType === "LIMIT" ? "GTC" : null),
    reduceOnly: order.reduceOnly ?? false,
    leverage: opening ? leverage : null,
    protectionPlan: opening
      ? { stopLossPrice: order.stopLossPrice ?? null, takeProfits: order.takeProfits ?? [] }
      : null,
  };
}

/** quantity, or notionalUsd at the price, on the step (rounded down); below the market minimum refused. */
function quantityOf(order: ManualOrder, market: Market): string {
  const raw = order.quantity ?? div(order.notionalUsd!, order.price!, 12, "DOWN");
  const quantity = roundToStep(raw, market.stepSize, "DOWN");
  if (cmp(quantity, market.minQty) < 0) {
    throw new ApiError("ASSET_NOTIONAL_LIMIT", {
      message: `Quantidade abaixo do mínimo do mercado (${market.minQty}).`,
    });
  }
  return quantity;
}

/** The gates (manual channel), the envelope and setup limits, then the entry-moment admission on a fresh book. */
async function checkOpening(
  ctx: Ctx,
  order: ManualOrder,
  { client, access, market, lease }: Resolved,
  entry: { quantity: string; price: string; leverage: number; setup: ReturnType<typeof valuesOf> },
): Promise<void> {
  let snapshot = await (await gateSnapshotsOf(ctx, client, access, "MANUAL")).snapshotOf(order.providerId);
  if (snapshot.readiness.reconciliationPending) {
    // A new entry waits for the account's open outcomes: settle them now (a query, never a resend), then judge.
    await reconcileAccount(ctx, (await findAccount(ctx.db.read, client.id, order.providerId))!, lease);
    snapshot = await (await gateSnapshotsOf(ctx, client, access, "MANUAL")).snapshotOf(order.providerId);
  }
  const decision = evaluateEntry(snapshot, "OPEN", { symbol: market!.symbol }, "MANUAL");
  if (decision.newEntries === "BLOCKED") throw entryRefusal(decision);
  const maxLeverage = Math.min(access.envelope.maxLeverage, entry.setup.leverage);
  const margin = div(mul(entry.quantity, entry.price), entry.leverage, 6, "UP");
  const maxMargin = String(
    microsToUsd(Math.min(access.envelope.maxMarginPerTradeMicros, entry.setup.maxMarginPerTradeMicros)),
  );
  if (entry.leverage > maxLeverage || cmp(margin, maxMargin) > 0) {
    throw new ApiError("RISK_ENVELOPE_EXCEEDED", {
      status: 422,
      message: `Acima do limite: leverage (máx. ${maxLeverage}) e margem por operação (máx. ${maxMargin} USD).`,
    });
  }
  const book = await callVenue(ctx, order.providerId, (venue) => venue.getOrderBook(market!.symbol));
  const admission = admitEntry(
    await assetPolicyOf(ctx.db.read, order.providerId, market!.symbol),
    { book, readAtWall: wallClockNow() },
    { side: order.side!, quantity: entry.quantity, price: entry.price },
    wallClockNow(),
  );
  if (!admission.admitted) throw new ApiError(admission.code, { message: admission.detail });
}

async function venuePosition(ctx: Ctx, account: AccountRow, symbol: string) {
  const snapshot = await callWithAccount(ctx, account, (venue, credentials) => venue.getAccount(credentials));
  const position = snapshot.positions.find((p) => p.symbol === symbol);
  if (!position) throw new ApiError("NOT_FOUND", { message: `Nenhuma posição aberta em ${symbol}.` });
  return position;
}

/** The intent id of an order: the partner's, or one derived from the Idempotency-Key so a retry finds it. */
function intentIdOf(ctx: Ctx, order: ManualOrder): string {
  if (order.intentId) return order.intentId;
  const key = ctx.idempotency?.scope.key ?? crypto.randomUUID();
  return "ik_" + sha256Hex(key).slice(0, 32);
}

// ---------------------------------------------------------------- prepare

export async function prepareOrder(ctx: Ctx, order: ManualOrder) {
  assertOrderShape(order);
  const resolved = await resolve(ctx, order);
  if (!["OPEN_POSITION", "PLACE_ORDER", "CLOSE_POSITION"].includes(order.type)) {
    return { intent: await checkMaintenance(ctx, order, resolved, "PREPARE") };
  }
  const draft = await orderDraft(ctx, order, resolved, intentIdOf(ctx, order));
  const intent = await withTransaction(ctx.db, async (tx) => {
    const existing = await findIntent(tx, draft.partnerId, draft.intentId);
    if (existing) throw new ApiError("VALIDATION_ERROR", { message: "intentId: já usado por outra ação." });
    const row = await insertIntent(tx, draft, "PREPARED", ctx.clock.now());
    const view = { intent: preparedView(row) };
    await ctx.idempotency?.record(tx, view);
    return view;
  });
  return intent;
}

/** The prepared form: the list form plus the order's terms (spec, Intent). */
function preparedView(row: IntentRow) {
  return {
    ...intentListView(row),
    orderType: row.orderType,
    price: row.price === null ? null : Number(row.price),
    leverage: row.leverage,
    reduceOnly: row.reduceOnly,
  };
}

// ---------------------------------------------------------------- execute

export async function executeOrder(ctx: Ctx, order: ManualOrder) {
  assertOrderShape(order);
  await ctx.idempotency?.claim();
  const resolved = await resolve(ctx, order);
  let result;
  if (["OPEN_POSITION", "PLACE_ORDER", "CLOSE_POSITION"].includes(order.type)) {
    result = { execution: await executeVenueOrder(ctx, order, resolved) };
  } else {
    result = { execution: await checkMaintenance(ctx, order, resolved, "EXECUTE") };
  }
  await withTransaction(ctx.db, async (tx) => await ctx.idempotency?.record(tx, result));
  return result;
}

async function executeVenueOrder(ctx: Ctx, order: ManualOrder, resolved: Resolved) {
  const intentId = intentIdOf(ctx, order);
  const existing = await findIntent(ctx.db.read, partnerOf(ctx), intentId);
  // The same intent again answers what became of it; only one the venue never took is sent again.
  if (existing && existing.status !== "NOT_PLACED" && existing.status !== "PREPARED") {
    return executionView(existing, 0);
  }
  if (!isOpening(order)) return await sendVenueOrder(ctx, order, resolved, intentId, existing);
  // An opening holds its account's entry lease from its gates to its protection: one entry at a time.
  const account = { clientId: resolved.client.id, providerId: order.providerId };
  const lease = await withTransaction(ctx.db, (tx) => claimEntryLease(tx, account, newLeaseOwner()));
  if (!lease) throw new ApiError("ACCOUNT_BUSY");
  return await holdingEntryLease(
    ctx,
    lease,
    () => sendVenueOrder(ctx, order, { ...resolved, lease }, intentId, existing),
  );
}

async function sendVenueOrder(
  ctx: Ctx,
  order: ManualOrder,
  resolved: Resolved,
  intentId: string,
  existing: IntentRow | null,
) {
  const started = performance.now();
  let intent: IntentRow;
  if (existing) {
    const resubmitted = await withTransaction(ctx.db, (tx) => resubmitIntent(tx, existing, ctx.clock.now()));
    // Another request sent it again meanwhile: that one's outcome is the answer, never a second send.
    if (!resubmitted) return executionView(await intentById(ctx.db.read, existing.id), 0);
    intent = resubmitted;
  } else {
    const draft = await orderDraft(ctx, order, resolved, intentId);
    intent = await withTransaction(ctx.db, (tx) => insertIntent(tx, draft, "SUBMITTING", ctx.clock.now()));
  }
  const builder = ctx.venues[order.providerId].capabilities.builderFee && intent.opensPosition &&
      resolved.access.partner.builderFeeTenthsBps > 0
    ? { address: ctx.config.venueBBuilderAddress, feeTenthsBps: resolved.access.partner.builderFeeTenthsBps }
    : undefined;
  // An opening (it holds the lease) is followed to its protection; any other order ends with its answer.
  const sent = resolved.lease
    ? await sendEntry(ctx, intent, resolved.account, { builder, lease: resolved.lease })
    : await sendIntent(ctx, intent, resolved.account, { builder });
  if (sent.status === "NOT_PLACED") throw notPlaced(sent);
  return executionView(sent, Math.round(performance.now() - started), builder?.feeTenthsBps);
}

/**
 * An order the venue took nothing of. A refused credential is the client's to
 * fix (reconnect), not a venue to wait for: answered as such, as when a read
 * before the order meets it, never as 503 PROVIDER_DOWN.
 */
function notPlaced(intent: IntentRow): ApiError {
  if (intent.errorCode === "PROVIDER_CREDENTIAL_REJECTED") {
    return new ApiError("PROVIDER_CREDENTIAL_REJECTED", { status: 422, message: intent.errorMessage ?? undefined });
  }
  return new ApiError("PROVIDER_DOWN", { message: intent.errorMessage ?? undefined });
}

function executionView(intent: IntentRow, latencyMs: number, builderFeeTenthsBps?: number) {
  const filledNotional = intent.executedPrice ? mul(intent.executedQuantity, intent.executedPrice) : "0";
  return {
    status: intent.status,
    intentId: intent.intentId,
    providerId: intent.providerId,
    orderId: intent.orderId,
    clientOrderId: intent.clientOrderId,
    filledQuantity: Number(intent.executedQuantity),
    averagePrice: intent.executedPrice === null ? null : Number(intent.executedPrice),
    requestedPrice: intent.price === null ? null : Number(intent.price),
    // Venue fees are known once the fills are read (the reconcile job records them as results).
    feeUsd: null,
    builderFeeUsd: builderFeeTenthsBps ? Number(div(mul(filledNotional, builderFeeTenthsBps), 100_000, 6)) : null,
    latencyMs,
    errorCode: intent.errorCode,
    errorMessage: intent.errorMessage,
  };
}

// ---------------------------------------------------------------- maintenance without a new order

async function checkMaintenance(ctx: Ctx, order: ManualOrder, resolved: Resolved, mode: "PREPARE" | "EXECUTE") {
  const { account, client, access } = resolved;
  const symbol = order.type === "CANCEL_ALL_ORDERS" ? order.symbol : required(resolved.market, "symbol").symbol;
  const act = mode === "EXECUTE";
  const view = (status: string, intentId: string | null = null) => ({
    status,
    intentId,
    providerId: order.providerId,
    type: order.type,
    symbol: symbol ?? null,
  });
  switch (order.type) {
    case "SET_LEVERAGE": {
      const leverage = required(order.leverage, "leverage");
      if (leverage > access.envelope.maxLeverage) {
        throw new ApiError("RISK_ENVELOPE_EXCEEDED", {
          status: 422,
          message: `leverage acima do envelope (máx. ${access.envelope.maxLeverage}).`,
        });
      }
      if (act) await callWithAccount(ctx, account, (v, c) => v.setLeverage(c, symbol!, leverage));
      return view(act ? "ACCEPTED" : "PREPARED");
    }
    case "SET_MARGIN_MODE": {
      const mode = required(order.marginMode, "marginMode") === "CROSS" ? "CROSSED" : "ISOLATED";
      if (act) await callWithAccount(ctx, account, (v, c) => v.setMarginMode(c, symbol!, mode));
      return view(act ? "ACCEPTED" : "PREPARED");
    }
    case "CANCEL_ORDER":
    case "UPDATE_ORDER": {
      const target = await ourOrder(ctx, client, order.providerId, required(order.orderId, "orderId"));
      if (!act) return view("PREPARED", target.intentId);
      const changed = order.type === "CANCEL_ORDER"
        ? await callWithAccount(ctx, account, (v, c) => v.cancelOrder(c, target.symbol, target.clientOrderId))
        : await callWithAccount(ctx, account, (v, c) =>
          v.modifyOrder(c, {
            symbol: target.symbol,
            clientOrderId: target.clientOrderId,
            quantity: required(order.quantity, "quantity"),
            price: required(order.price, "price"),
          }));
      const row = await withTransaction(ctx.db, (tx) =>
        transitionIntent(tx, target, {
          status: changed.status === "CANCELED" ? "CANCELED" : target.status,
          executedQuantity: changed.filledQuantity,
          ...(order.type === "UPDATE_ORDER" ? { quantity: changed.quantity, price: changed.price } : {}),
        }, ctx.clock.now()));
      return view(row?.status ?? target.status, target.intentId);
    }
    case "CANCEL_ALL_ORDERS": {
      // Protective orders stay: cancelling them would leave open positions unprotected.
      const open = await ctx.db.read.select().from(intents).where(and(
        eq(intents.clientId, client.id),
        eq(intents.providerId, order.providerId),
        inArray(intents.status, ["ACCEPTED", "PARTIALLY_FILLED"]),
        inArray(intents.type, ["OPEN_POSITION", "PLACE_ORDER", "ENTRY"]),
        symbol ? eq(intents.symbol, symbol) : undefined,
      ));
      if (act) {
        for (const target of open) {
          const cancelled = await callWithAccount(
            ctx,
            account,
            (v, c) => v.cancelOrder(c, target.symbol, target.clientOrderId),
          );
          await withTransaction(ctx.db, (tx) =>
            transitionIntent(tx, target, {
              status: cancelled.status === "CANCELED" ? "CANCELED" : target.status,
              executedQuantity: cancelled.filledQuantity,
            }, ctx.clock.now()));
        }
      }
      return { ...view(act ? "CANCELED" : "PREPARED"), cancelled: open.length };
    }
    case "SET_STOP_LOSS":
    case "SET_TAKE_PROFIT": {
      const position = await ourPosition(
        ctx,
        client,
        order.providerId,
        symbol!,
        required(order.positionSide, "positionSide"),
      );
      if (!act) return view("PREPARED");
      const updated = await replaceProtection(ctx, account, position, order);
      return { ...view(updated.protectionStatus), positionId: updated.positionId };
    }
  }
  throw new ApiError("VALIDATION_ERROR", { message: `type: ${order.type} não é uma ação de manutenção.` });
}

/** An order the service placed for this client, by the venue's order id or our client order id. */
async function ourOrder(ctx: Ctx, client: ClientRow, providerId: ProviderId, orderId: string): Promise<IntentRow> {
  const rows = await ctx.db.read.select().from(intents)
    .where(and(eq(intents.clientId, client.id), eq(intents.providerId, providerId)));
  const target = rows.find((row) => row.orderId === orderId || row.clientOrderId === orderId);
  if (!target) throw new ApiError("NOT_FOUND");
  return target;
}

async function ourPosition(ctx: Ctx, client: ClientRow, providerId: ProviderId, symbol: string, side: "BUY" | "SELL") {
  const [position] = await ctx.db.read.select().from(positions).where(and(
    eq(positions.clientId, client.id),
    eq(positions.providerId, providerId),
    eq(positions.symbol, symbol),
    eq(positions.side, side === "BUY" ? "LONG" : "SHORT"),
    eq(positions.status, "OPEN"),
  ));
  if (!position) throw new ApiError("NOT_FOUND", { message: `Nenhuma posição aberta do serviço em ${symbol}.` });
  return position;
}

/**
 * SET_STOP_LOSS / SET_TAKE_PROFIT: the new legs are placed, the position
 * takes the new values, then the old legs of that kind are cancelled, in
 * that order, so a crash at any point leaves the position with working legs
 * (the reconciliation cancels whichever are left over, position_maintenance.ts).
 * A new leg the venue took nothing of (down, or the credential refused)
 * changes nothing else: the request fails as an order would, the old legs
 * stay.
 */
async function replaceProtection(ctx: Ctx, account: AccountRow, position: PositionRow, order: ManualOrder) {
  const kind: Leg["kind"] = order.type === "SET_STOP_LOSS" ? "STOP_LOSS" : "TAKE_PROFIT";
  const legs = await ctx.db.read.select().from(intents).where(eq(intents.positionId, position.positionId))
    .orderBy(asc(intents.id));
  const changes = kind === "STOP_LOSS"
    ? { stopLossPrice: required(order.stopLossPrice, "stopLossPrice") }
    : { takeProfits: required(order.takeProfits, "takeProfits") };
  const wanted: PositionRow = { ...position, ...changes };
  const placed: IntentRow[] = [];
  let seq = legs.length;
  if (kind === "STOP_LOSS") {
    const stop: Leg = { kind, triggerPrice: wanted.stopLossPrice!, quantity: wanted.quantity };
    placed.push(await placeLeg(ctx, wanted, account, stop, ++seq, "refuse"));
  } else {
    const market = (await findMarket(ctx, position.providerId as ProviderId, position.symbol))!;
    for (const target of takeProfitQuantities(wanted.quantity, wanted.takeProfits, market.stepSize)) {
      const leg: Leg = { kind, triggerPrice: target.price, quantity: target.quantity };
      placed.push(await placeLeg(ctx, wanted, account, leg, ++seq, "refuse"));
    }
  }
  const missed = placed.find((leg) => leg.status === "NOT_PLACED");
  if (missed) throw notPlaced(missed);
  const [updated] = await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(positions).set({ ...changes, updatedAt: ctx.clock.now() })
        .where(eq(positions.positionId, position.positionId)).returning(),
  );
  for (const leg of legs.filter((leg) => leg.type === kind && leg.status === "ACCEPTED")) {
    await callWithAccount(ctx, account, (v, c) => v.cancelProtection(c, leg.symbol, leg.clientOrderId));
    await withTransaction(ctx.db, (tx) => transitionIntent(tx, leg, { status: "CANCELED" }, ctx.clock.now()));
  }
  const others = legs.filter((leg) => leg.type !== kind && leg.status === "ACCEPTED");
  return await recordProtection(ctx, updated, [...others, ...placed]);
}
